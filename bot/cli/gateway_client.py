"""Talking to the running gateway: its control socket, or the cluster's scheduler on the redis bus."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from bot.config.schema import Config

CONTROL_TIMEOUT = 10.0
CRON_RUN_TIMEOUT = 930.0  # above the scheduler's own delivery timeout (a prompt job runs a whole turn)


def unreachable(exc: Exception) -> typer.Exit:
    """Say in one line that the gateway did not answer; the caller raises the exit (code 1) this returns."""
    typer.echo(f"error: {exc}; check it with `relaybot logs`.", err=True)
    return typer.Exit(1)


def ask_gateway(config: Config, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
    """One request to the running gateway; None when none runs; exit 1 in one line when it does not answer."""
    from bot.config.paths import control_socket
    from bot.errors import GatewayUnreachable
    from bot.ops.control import send_control

    try:
        return send_control(control_socket(config), request, CONTROL_TIMEOUT if timeout is None else timeout)
    except GatewayUnreachable as exc:
        raise unreachable(exc) from None


def gateway_status(config: Config) -> dict[str, Any] | None:
    """The running gateway's status answer, or None when none runs or it does not answer."""
    from bot.config.paths import control_socket
    from bot.errors import GatewayUnreachable
    from bot.ops.control import send_control

    try:
        return send_control(control_socket(config), {"op": "status"}, CONTROL_TIMEOUT)
    except GatewayUnreachable:
        return None


def cron_changed(config: Config) -> bool:
    """Tell the scheduler to re-read the jobs; False when nothing runs it; exit 1 when the gateway does not answer."""
    from bot.app.backend import stores_for
    from bot.errors import GatewayUnreachable

    try:
        return stores_for(config).scheduler_line().jobs_changed()
    except GatewayUnreachable as exc:
        raise unreachable(exc) from None


def run_cron_job(config: Config, job_id: str) -> dict[str, Any] | None:
    """Fire a job where the scheduler runs and wait for its outcome; None when nothing runs it."""
    from bot.app.backend import stores_for
    from bot.app.channel_kinds import chat_bots
    from bot.errors import GatewayUnreachable

    channels = [*(bot.key for bot in chat_bots(config)), *(["api"] if config.channels.api.enabled else [])]
    try:
        return stores_for(config).scheduler_line().run_now(job_id, channels, CRON_RUN_TIMEOUT)
    except GatewayUnreachable as exc:
        raise unreachable(exc) from None
