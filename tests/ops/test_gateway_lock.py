"""One gateway per home: the lock file's second holder is refused, and the lock is free again once released."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.ops.gateway_lock import AlreadyRunning, GatewayLock


def test_a_second_holder_is_told_who_runs(tmp_path: Path) -> None:
    path = tmp_path / "state" / "gateway.lock"
    with GatewayLock(path):
        assert path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(AlreadyRunning) as refused:
            GatewayLock(path).acquire()
        assert refused.value.pid == str(os.getpid())
        assert str(path) in str(refused.value)


def test_the_lock_is_free_again_once_released(tmp_path: Path) -> None:
    path = tmp_path / "gateway.lock"
    first = GatewayLock(path)
    first.acquire()
    first.release()
    with GatewayLock(path):
        pass
    second = GatewayLock(path)
    second.acquire()
    second.release()
    second.release()  # releasing twice is harmless
