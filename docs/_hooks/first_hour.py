"""mkdocs hook: Getting started is the README's first hour, with its links into `docs/` made relative to `docs/`.

The snippets extension would include the section as it is, and `docs/platforms/telegram.md`, right from the
README, points nowhere from inside `docs/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAGE = "getting-started.md"
INCLUDE = '--8<-- "README.md:first-hour"'
START, END = "<!-- --8<-- [start:first-hour] -->", "<!-- --8<-- [end:first-hour] -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The first hour in place of its include line on the Getting started page; other pages as they are."""
    if page.file.src_uri != PAGE:
        return markdown
    readme = (Path(config["config_file_path"]).parent / "README.md").read_text(encoding="utf-8")
    section = readme.split(START, 1)[1].split(END, 1)[0]
    return markdown.replace(INCLUDE, section.replace("](docs/", "]("))
