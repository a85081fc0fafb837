"""Reaching the process that runs the scheduler from a CLI command: tell it the jobs changed, or fire one now."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from bot.ops.control import send_control

Reply = dict[str, Any]


class SchedulerLine(Protocol):
    """The way to whoever runs the scheduler, wherever it runs."""

    def jobs_changed(self) -> bool:
        """Tell whoever runs the scheduler that the jobs changed; False when nobody runs it.

        Raises GatewayUnreachable when the gateway is there but does not answer.
        """

    def run_now(self, job_id: str, channels: list[str], timeout: float) -> Reply | None:
        """Fire a job now where the scheduler runs and wait up to `timeout` for its outcome; None when nobody runs it.

        `channels` are those a target may be on; raises GatewayUnreachable when the gateway does not answer.
        """


class ControlSocketLine:
    """The local bus: the gateway runs the scheduler and answers on its control socket."""

    def __init__(self, socket: Path) -> None:
        self._socket = socket

    def jobs_changed(self) -> bool:
        return send_control(self._socket, {"op": "cron.changed"}) is not None

    def run_now(self, job_id: str, channels: list[str], timeout: float) -> Reply | None:
        return send_control(self._socket, {"op": "cron.run", "id": job_id}, timeout)
