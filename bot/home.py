"""The relaybot home folder: bundled templates and `relaybot init`."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    """A file shipped with relaybot: inside the wheel, or at the top of a source checkout."""
    for candidate in (_PACKAGE / "_bundled" / name, _PACKAGE.parent / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"relaybot installation is missing {name}")


@dataclass
class InitReport:
    """What `init` created and what it left alone."""

    created: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def init_config(config_file: Path, report: InitReport) -> None:
    """Create the config file from the example, mode 0600, unless it exists."""
    config_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _copy_new(bundled("config.example.yaml"), config_file, report, mode=0o600)


def init_workspace(workspace: Path, report: InitReport) -> None:
    """Copy every template file into the workspace, keeping files that exist."""
    template = bundled("workspace-template")
    for source in sorted(template.rglob("*")):
        if source.is_file():
            _copy_new(source, workspace / source.relative_to(template), report)


def _copy_new(source: Path, target: Path, report: InitReport, mode: int = 0o600) -> None:
    if target.exists():
        report.kept.append(target)
        return
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out)
    report.created.append(target)
