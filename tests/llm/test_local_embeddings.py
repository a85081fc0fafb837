"""The in-process embedding model: the weights wordllama ships, loaded on first use, nothing fetched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.errors import ProviderError
from bot.llm.local_embeddings import INLINE_CHARS, NAME, LocalEmbeddings

DOG = "My dog loves to fetch the ball in the park"
PUPPY = "Our puppy chases balls on the grass"
TAXES = "The quarterly tax report is due on Friday"
FILING = "I need to file my taxes before the deadline"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_texts_about_the_same_thing_come_closest() -> None:
    embedded = await LocalEmbeddings().embed([DOG, PUPPY, TAXES, FILING])
    dog, puppy, taxes, filing = embedded.vectors
    assert cosine(dog, puppy) > 0.3 > max(cosine(dog, taxes), cosine(dog, filing), cosine(puppy, taxes))
    assert cosine(taxes, filing) > max(cosine(taxes, dog), cosine(taxes, puppy))
    assert all(len(vector) == 256 and abs(cosine(vector, vector) - 1) < 1e-5 for vector in embedded.vectors)
    assert embedded.cost == 0.0 and embedded.tokens >= 4 * 7


async def test_a_paraphrased_question_is_nearest_its_passage() -> None:
    model = LocalEmbeddings()
    passages = (await model.embed(["I bought a new car, a red Toyota", "Filler about cooking pasta", TAXES])).vectors
    [question] = (await model.embed(["What vehicle did I purchase?"])).vectors
    assert max(range(3), key=lambda n: cosine(passages[n], question)) == 0


async def test_short_texts_on_the_loop_and_long_batches_in_a_thread_give_the_same_vectors() -> None:
    model = LocalEmbeddings()
    long = " ".join([DOG] * (INLINE_CHARS // len(DOG) + 1))
    threaded = await model.embed([DOG, long])  # the first call loads the model in a worker thread
    inline = await model.embed([DOG])
    assert threaded.vectors[0] == inline.vectors[0]
    assert (await model.embed([long])).vectors == [threaded.vectors[1]]
    assert (await model.embed([])).vectors == [] and model.model == NAME


async def test_a_model_folder_without_the_weights_fails_with_a_provider_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="did not load"):
        await LocalEmbeddings(tmp_path).embed(["hello"])


def test_importing_the_model_loads_neither_weights_nor_tokenizer() -> None:
    code = (
        "import sys\nimport bot.llm.local_embeddings\nmodel = bot.llm.local_embeddings.LocalEmbeddings()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'tokenizers', 'safetensors', 'wordllama'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
