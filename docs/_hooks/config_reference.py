"""mkdocs hook: the configuration reference page, generated from the config schema at every build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from bot.config.reference import config_reference

PAGE = "reference/configuration.md"


def on_files(files: Files, config: Any) -> Files:
    """Add the generated page; the example config beside mkdocs.yml supplies each key's note."""
    example = (Path(config["config_file_path"]).parent / "config.example.yaml").read_text(encoding="utf-8")
    files.append(File.generated(config, PAGE, content=config_reference(example)))
    return files
