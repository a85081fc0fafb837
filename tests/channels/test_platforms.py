"""The registry of chat platforms against the tree: every platform package with a KIND is listed, with its config."""

from pathlib import Path

import channels
from bot.config.channels.sections import ChannelsConfig
from channels.platforms import KINDS

CHANNELS = Path(channels.__file__).parent


def test_every_package_that_exports_a_kind_is_in_the_list() -> None:
    exporting = {init.parent.name for init in CHANNELS.glob("*/__init__.py") if "\nKIND = " in init.read_text()}
    assert exporting == set(KINDS)


def test_each_kind_is_named_after_its_package_and_its_config_section() -> None:
    for name, kind in KINDS.items():
        assert kind.name == name and kind.build.__module__ == f"channels.{name}"
    assert list(ChannelsConfig().chat_sections()) == list(KINDS)


def test_only_a_webhook_platform_needs_the_gateway_http_server() -> None:
    assert [name for name, kind in KINDS.items() if kind.webhook] == ["whatsapp", "teams"]
