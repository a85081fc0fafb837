"""The house's layout where import-linter cannot see it, in bot/ and channels/: no module over 400 lines, no folder
with more than 20 modules directly, few shared modules in channels/, one package per platform (read from the tree)
with its tests folder, and no class with more than 20 methods."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANNELS = ROOT / "channels"
MAX_SHARED_MODULES = 17
RUNNER = "gateway"  # the package that runs every channel; every other package in channels/ is a platform
MAX_METHODS = 20
MAX_LINES = 400
MAX_MODULES = 20
PACKAGES = ("bot", "channels")
ATTRIBUTES = frozenset({"property", "cached_property", "setter"})


def problems() -> list[str]:
    """Each way the tree breaks the layout, as one line."""
    found = []
    shared = sorted(path.name for path in CHANNELS.glob("*.py") if path.name != "__init__.py")
    if len(shared) > MAX_SHARED_MODULES:
        found.append(f"channels/ holds {len(shared)} shared modules, at most {MAX_SHARED_MODULES}: {', '.join(shared)}")
    for platform in platforms():
        if not (CHANNELS / platform / "channel.py").is_file():
            found.append(f"channels/{platform}/channel.py is missing: each platform is a package with its channel.py")
        if not (ROOT / "tests" / "channels" / platform).is_dir():
            found.append(f"tests/channels/{platform}/ is missing: tests mirror the platform packages")
    found.extend(f"{where} has {count} methods, at most {MAX_METHODS}" for where, count in crowded_classes())
    found.extend(f"{path} has {count} lines, at most {MAX_LINES}: it is two concepts" for path, count in long_modules())
    found.extend(wide_folders())
    return found


def modules() -> list[Path]:
    """Every module of bot/ and channels/ but the packages' __init__.py, relative to the root."""
    found = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py") if path.name != "__init__.py"]
    return sorted(path.relative_to(ROOT) for path in found)


def long_modules() -> Iterator[tuple[Path, int]]:
    """Each module longer than MAX_LINES."""
    for path in modules():
        if (count := len((ROOT / path).read_text().splitlines())) > MAX_LINES:
            yield path, count


def wide_folders() -> Iterator[str]:
    """Each folder holding more than MAX_MODULES modules directly."""
    counts = Counter(path.parent.as_posix() for path in modules())
    for folder, count in sorted(counts.items()):
        if count > MAX_MODULES:
            yield f"{folder}/ holds {count} modules, at most {MAX_MODULES}: a wider folder is two concepts"


def platforms() -> list[str]:
    """The platform packages, read from the tree: every package in channels/ but the runner."""
    return sorted(init.parent.name for init in CHANNELS.glob("*/__init__.py") if init.parent.name != RUNNER)


def crowded_classes() -> Iterator[tuple[str, int]]:
    """Each class in bot/ and channels/ with more than MAX_METHODS methods (a property counts as an attribute)."""
    for package in ("bot", "channels"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ClassDef) and (count := _methods(node)) > MAX_METHODS:
                    yield f"{path.relative_to(ROOT)}:{node.lineno} class {node.name}", count


def _methods(cls: ast.ClassDef) -> int:
    functions = [item for item in cls.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
    return sum(1 for function in functions if not ATTRIBUTES & {_name(d) for d in function.decorator_list})


def _name(decorator: ast.expr) -> str:
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else ""


if __name__ == "__main__":
    found = problems()
    for line in found:
        print(line)
    sys.exit(1 if found else 0)
