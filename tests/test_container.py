"""The container image: it builds, and `relaybot --version` and `relaybot doctor --json` run inside it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IMAGE = "relaybot-test:latest"


def _docker_daemon() -> str | None:
    """Why the image cannot be built here, or None when a Docker daemon answers."""
    if shutil.which("docker") is None:
        return "the docker command is not installed"
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"no Docker daemon answers: {probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else ''}"
    return None


@pytest.fixture(scope="module")
def image() -> str:
    reason = _docker_daemon()
    if reason is not None:
        pytest.skip(reason)
    subprocess.run(["docker", "build", "-t", IMAGE, str(ROOT)], check=True, timeout=1200)
    return IMAGE


def test_image_runs_version(image: str) -> None:
    result = subprocess.run(["docker", "run", "--rm", image, "--version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("relaybot ")


def test_image_runs_doctor_as_json(image: str) -> None:
    script = "relaybot init --non-interactive >/dev/null && relaybot doctor --json"
    result = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "sh", image, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
    )
    checks = json.loads(result.stdout)
    names = {check["name"] for check in checks}
    assert {"config", "workspace", "state"} <= names
    assert all(check["status"] != "fail" for check in checks if check["name"] in {"workspace", "state"})


def test_compose_file_runs_redis_a_gateway_and_two_workers() -> None:
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())["services"]
    assert services["gateway"]["command"] == ["run", "--role", "gateway"]
    assert services["worker"]["deploy"]["replicas"] == 2
    assert "redis" in services
