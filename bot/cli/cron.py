"""`relaybot cron`: list, add, remove and run scheduled prompts and reminders."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import typer

from bot.cli.gateway_client import cron_changed, run_cron_job
from bot.cli.options import load

if TYPE_CHECKING:
    from bot.bus import ChatRef
    from bot.config.schema import Config
    from bot.scheduler.cron import CronService

app = typer.Typer(help="Scheduled prompts and reminders.", no_args_is_help=True)

T = TypeVar("T")


def _cron_call(ctx: typer.Context, action: Callable[[CronService], T]) -> T:
    """Open the job store (without firing anything), run `action` on it, close it."""
    import asyncio

    from bot.app.backend import stores_for

    stores = stores_for(load(ctx.obj))  # on the redis bus, the shared store; adding or removing tells the leader

    async def call() -> T:
        service = stores.cron()
        await service.start(paused=True)
        try:
            return action(service)
        finally:
            await service.stop()
            await stores.aclose()

    return asyncio.run(call())


def _check_target(config: Config, target: ChatRef) -> None:
    """Exit 2 in one line unless `target` is on an enabled chat channel, and on one of its bots."""
    from bot.app.channel_kinds import chat_bots, enabled_channels
    from channels.platforms import KINDS

    channel = target.channel

    if channel not in KINDS:
        known = ", ".join(KINDS)
        raise typer.BadParameter(f"no channel {channel!r}; channels are {known}", param_hint="--to")
    if channel not in enabled_channels(config):
        raise typer.BadParameter(
            f"channel {channel} is not enabled; set channels.{channel}.enabled: true first", param_hint="--to"
        )
    if target.channel_key not in {bot.key for bot in chat_bots(config)}:
        raise typer.BadParameter(
            f"{channel} has no bot {target.account!r}; name one of channels.{channel}.accounts", param_hint="--to"
        )


@app.command("list")
def cron_list(ctx: typer.Context) -> None:
    """Every job: id, name, schedule, next run, target and last status."""
    jobs = _cron_call(ctx, lambda service: service.jobs())
    if not jobs:
        typer.echo("No jobs. Add one with `relaybot cron add`.")
    for job in jobs:
        next_run = f"{job.next_run:%Y-%m-%d %H:%M %Z}" if job.next_run else "never"
        last = job.last_run
        status = "never ran" if last is None else ("ok" if last.ok else f"failed ({last.error})")
        if last is not None and not last.delivered:
            status += ", not delivered"
        typer.echo(
            f"{job.id}  {job.name!r}  {job.payload.schedule}  next {next_run}  to {job.payload.target}"
            f"  {job.payload.action}  last: {status}"
        )


@app.command("add")
def cron_add(
    ctx: typer.Context,
    to: str = typer.Option(..., "--to", help="Target chat, CHANNEL:CHAT_ID such as telegram:123."),
    every: str | None = typer.Option(None, "--every", help="Repeat every DURATION (30m, 1h, 1d)."),
    cron: str | None = typer.Option(None, "--cron", help='A 5-field cron expression, such as "0 8 * * *".'),
    at: str | None = typer.Option(None, "--at", help="Once, at an ISO date-time such as 2026-12-24T18:00."),
    tz: str | None = typer.Option(None, "--tz", help="Timezone of the schedule (default: config timezone)."),
    message: str | None = typer.Option(None, "--message", help="A prompt the agent answers in the target chat."),
    remind: str | None = typer.Option(None, "--remind", help="A text delivered as-is, without the model."),
    name: str | None = typer.Option(None, "--name", help="A short name for the job."),
) -> None:
    """Add a job; a running gateway picks it up within seconds."""
    from bot.bus import ChatRef, Trust
    from bot.scheduler.limits import Action
    from bot.scheduler.schedules import Schedule, ScheduleError, ScheduleKind

    given: tuple[tuple[ScheduleKind, str | None], ...] = (("every", every), ("cron", cron), ("at", at))
    schedules = [(kind, value) for kind, value in given if value]
    actions: tuple[tuple[Action, str | None], ...] = (("message", message), ("remind", remind))
    texts = [(kind, value) for kind, value in actions if value]
    if len(schedules) != 1:
        raise typer.BadParameter("give exactly one of --every, --cron or --at")
    if len(texts) != 1:
        raise typer.BadParameter("give exactly one of --message or --remind")
    try:
        target = ChatRef.parse(to)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--to") from None
    config = load(ctx.obj)
    _check_target(config, target)
    schedule = Schedule(schedules[0][0], schedules[0][1], tz or config.timezone)
    is_owner_dm = f"{target.channel}:{target.chat_id}" in config.owner_accounts()
    try:
        job = _cron_call(
            ctx,
            lambda service: service.add(
                schedule,
                target,
                texts[0][0],
                texts[0][1],
                name,
                Trust.OWNER,
                is_direct=is_owner_dm,
            ),
        )
    except ScheduleError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    running = cron_changed(config)
    next_run = f"{job.next_run:%Y-%m-%d %H:%M %Z}" if job.next_run else "never"
    typer.echo(f"Added job {job.id}; next run {next_run}." + ("" if running else " (The gateway is not running.)"))


@app.command("remove")
def cron_remove(ctx: typer.Context, job_id: str) -> None:
    """Remove a job."""
    if not _cron_call(ctx, lambda service: service.remove(job_id)):
        typer.echo(f"No job {job_id}.", err=True)
        raise typer.Exit(1)
    cron_changed(load(ctx.obj))
    typer.echo(f"Removed job {job_id}.")


@app.command("run")
def cron_run(ctx: typer.Context, job_id: str) -> None:
    """Fire a job now, in the running gateway (on the redis bus, on the cluster)."""
    reply = run_cron_job(load(ctx.obj), job_id)
    if reply is None:
        typer.echo("The gateway is not running; start it with `relaybot run`.", err=True)
        raise typer.Exit(1)
    if not reply.get("ok"):
        typer.echo(f"Job {job_id} failed: {reply.get('error')}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Job {job_id} ran and was delivered.")
