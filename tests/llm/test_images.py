"""Image generation through the real litellm against the fake OpenAI images endpoint."""

import pytest

from bot.llm.images import ImageModel
from bot.llm.prices import image_cost
from tests.fakes.openai_server import PNG_PIXEL, FakeLLM


async def test_the_picture_comes_back_as_bytes_with_its_type_and_table_price(fake_llm: FakeLLM) -> None:
    model = ImageModel("openai/gpt-image-1", fake_llm.base_url, "sk-test", "1024x1024", "low")
    image = await model.generate("a duck in the rain")
    assert (image.data, image.mime_type, image.cost) == (PNG_PIXEL, "image/png", pytest.approx(0.011))
    (body,) = fake_llm.image_requests
    assert (body["model"], body["prompt"], body["size"], body["quality"]) == (
        "gpt-image-1",
        "a duck in the rain",
        "1024x1024",
        "low",
    )


async def test_a_jpeg_is_recognised_and_an_unknown_models_cost_is_unknown(fake_llm: FakeLLM) -> None:
    fake_llm.image = b"\xff\xd8\xff\xe0 a jpeg"
    image = await ImageModel("openai/painter-9", fake_llm.base_url, "sk-test", "512x512").generate("x")
    assert (image.mime_type, image.cost) == ("image/jpeg", None)


def test_image_cost_reads_per_picture_rows_by_quality_and_size() -> None:
    assert image_cost("openai/gpt-image-1", "1024x1024", "medium") == pytest.approx(0.042)
    assert image_cost("openai/nothing", "1024x1024", None) is None
