import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    return re.search(r"Run the tests:\n\n```sh\n(.+)\n```", readme).group(1)


def test_ci_runs_exactly_the_readme_test_command_and_leaves_pip_alone() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    assert commands[-1] == readme_test_command() == "pip install -e '.[dev]' && bash .ci/checks && python -m pytest"
    assert [line for line in commands if re.search(r"(?<![/\w])pip\b", line)] == [commands[-1]]
    # Only Synapse, the Matrix tests' homeserver, is installed besides, into a venv of its own.
    assert [line for line in commands if re.search(r"/pip\b", line)] == [
        "\"$SYNAPSE_VENV/bin/pip\" install -q 'matrix-synapse==1.163.*' ||"
    ]


def test_ci_installs_the_system_packages_the_readme_names() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    packages = set(re.findall(r"\[([\w-]+)\]=", script))
    assert packages == {"bubblewrap", "redis-server", "chromium", "dovecot-imapd", "ngircd", "prosody"}
    readme = (ROOT / "README.md").read_text()
    assert all(f"`{package}`" in readme.split("## First steps")[0] for package in packages)
    assert "apt-get update" in script and "DEBIAN_FRONTEND=noninteractive" in script


def test_checks_run_the_import_contracts_types_lint_format_and_the_docs_build() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "checks").read_text().splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    assert commands[-6:-1] == ["python .ci/layout.py", "lint-imports", "mypy", "ruff check .", "ruff format --check ."]
    assert "mkdocs build --strict" in commands[-1]
    assert "set -euo pipefail" in commands


def test_the_tree_keeps_the_layout_module_and_folder_caps_and_the_class_size_cap() -> None:
    result = subprocess.run([sys.executable, ".ci/layout.py"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "", result.stdout
