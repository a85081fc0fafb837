"""The relaybot home folder: bundled templates and `relaybot init`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.storage.private_file import write_private

_PACKAGE = Path(__file__).resolve().parent.parent  # bot/


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
    added_keys: list[str] = field(default_factory=list)


def init_config(config_file: Path, report: InitReport) -> None:
    """Create the config file from the example, mode 0600, unless it exists."""
    config_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _copy_new(bundled("config.example.yaml"), config_file, report, mode=0o600)


def add_new_keys(config_file: Path, report: InitReport) -> None:
    """Append keys new in this version to an existing config, commented out with their defaults."""
    import yaml

    from bot import __version__
    from bot.config.text_editor import commented_additions, missing_keys

    text = config_file.read_text(encoding="utf-8")
    example = bundled("config.example.yaml").read_text(encoding="utf-8")
    try:
        user = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return  # the config's own error is reported by the caller
    if not isinstance(user, dict):
        return
    block, added = commented_additions(text, example, missing_keys(user, yaml.safe_load(example)))
    if not added:
        return
    header = f"# Added by `relaybot init` ({__version__}): keys new in this version, commented out with their defaults."
    write_private(config_file, text + ("" if text.endswith("\n") else "\n") + f"\n{header}\n{block}\n")
    report.added_keys.extend(added)


def init_workspace(workspace: Path, report: InitReport) -> None:
    """Copy every template file into the workspace, keeping files that exist."""
    template = bundled("workspace-template")
    workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
    for source in sorted(template.rglob("*")):
        if source.is_file():
            _copy_new(source, workspace / source.relative_to(template), report)


def _copy_new(source: Path, target: Path, report: InitReport, mode: int = 0o600) -> None:
    if target.exists():
        report.kept.append(target)
        return
    write_private(target, source.read_bytes(), mode)
    report.created.append(target)
