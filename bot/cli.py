"""The `relaybot` command line; heavy modules load inside the commands that need them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.access import PairingBook
    from bot.config import Config, MCPServerConfig
    from bot.scheduler.cron import CronService

app = typer.Typer(
    help="relaybot: a self-hosted AI assistant for Telegram, Discord and Slack.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class Options:
    config: Path
    log_level: str


@app.callback()
def options(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", "-c", help="Config file (default: $RELAYBOT_CONFIG or ~/.relaybot/config.yaml)."
    ),
    log_level: str = typer.Option("warning", "--log-level", help="debug, info, warning or error."),
) -> None:
    """Global options."""
    from bot.config import config_path
    from bot.filemodes import private_umask

    private_umask()  # whatever the command creates under the relaybot home is private
    if log_level.lower() not in LOG_LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LOG_LEVELS)}", param_hint="--log-level")
    ctx.obj = Options(config_path(config), log_level.lower())


def _load(options: Options) -> Config:
    """Load the config or exit 2 with one clear line."""
    from bot.config import load_config
    from bot.errors import ConfigError
    from bot.logs import setup_logging

    try:
        config = load_config(options.config)
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
    setup_logging(options.log_level, config.secrets())
    return config


@app.command()
def init(ctx: typer.Context) -> None:
    """Create the config file and the workspace (never overwrites existing files)."""
    from bot.config import home_dir, load_config
    from bot.errors import ConfigError
    from bot.home import InitReport, init_config, init_workspace

    options: Options = ctx.obj
    report = InitReport()
    init_config(options.config, report)
    try:
        workspace = load_config(options.config).workspace
    except ConfigError as exc:
        typer.echo(f"note: the config has a problem: {exc}", err=True)
        workspace = home_dir() / "workspace"
    init_workspace(workspace, report)
    for path in report.created:
        typer.echo(f"created {path}")
    for path in report.kept:
        typer.echo(f"kept    {path} (already there)")
    typer.echo(
        f"\nNext: set llm.model (and llm.api_key, or export OPENAI_API_KEY) in {options.config},\n"
        "then talk to the bot with `relaybot chat`, or connect a chat app and run `relaybot run`."
    )


@app.command()
def chat(
    ctx: typer.Context,
    message: str | None = typer.Option(None, "--message", "-m", help="Ask once, print the answer and exit."),
) -> None:
    """Chat with the bot in this terminal."""
    config = _load(ctx.obj)
    import asyncio

    from bot.app import run_console
    from bot.errors import ConfigError

    try:
        code = asyncio.run(run_console(config, message))
    except ConfigError as exc:  # found while composing, such as tools.exec.sandbox: bwrap without a usable bwrap
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


@app.command()
def run(
    ctx: typer.Context,
    role: str = typer.Option(
        "all", "--role", help="all (one process), gateway (channels and delivery) or worker (agent turns); redis bus."
    ),
) -> None:
    """Start the gateway: the agent and every enabled channel."""
    from bot.bus.cluster import ROLES

    if role not in ROLES:
        raise typer.BadParameter(f"use one of {', '.join(ROLES)}", param_hint="--role")
    config = _load(ctx.obj)
    import asyncio
    import contextlib

    from bot.app import run_gateway
    from bot.errors import ConfigError

    try:
        with contextlib.suppress(KeyboardInterrupt):
            raise typer.Exit(asyncio.run(run_gateway(config, role)))  # type: ignore[arg-type]
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command()
def status(ctx: typer.Context) -> None:
    """Show the config in use, the model and the channels."""
    config = _load(ctx.obj)
    from bot.app import CHANNEL_CLASSES, journal_path
    from bot.bus.journal import describe_journal

    options: Options = ctx.obj
    sessions = config.state_dir / "sessions"
    count = len(list(sessions.glob("*.jsonl"))) if sessions.exists() else 0
    typer.echo(f"config:    {options.config}")
    typer.echo(f"workspace: {config.workspace}")
    typer.echo(f"state:     {config.state_dir} ({count} sessions)")
    typer.echo(f"model:     {config.llm.model}" + (f" at {config.llm.api_base}" if config.llm.api_base else ""))
    for name in CHANNEL_CLASSES:
        typer.echo(f"{name + ':':<10} {'enabled' if getattr(config.channels, name).enabled else 'disabled'}")
    if config.bus.backend == "redis":
        typer.echo(f"bus:       redis at {config.bus.url}")
        for line in _cluster_lines(config):
            typer.echo(f"  {line}")
    else:
        typer.echo(f"delivery:  {describe_journal(journal_path(config))}")
    typer.echo(f"exec:      {_exec_status(config)}")
    for name, server in config.mcp_servers.items():
        typer.echo(f"mcp {name}: {_mcp_status(server)}")


def _mcp_status(server: MCPServerConfig) -> str:
    """Connect once to an MCP server and report its tool count, or why it cannot be reached."""
    import asyncio

    from bot.tools.mcp import probe, root_cause

    where = server.url or " ".join([server.command or "", *server.args])
    try:
        tools = asyncio.run(probe(server))
    except Exception as exc:
        return f"{where}: cannot start ({root_cause(exc)!r})"
    return f"{where}: {len(tools)} tool{'s' if len(tools) != 1 else ''}"


def _cluster_lines(config: Config) -> list[str]:
    """The cluster view from Redis, or one line saying why it cannot be read."""
    import asyncio

    from redis.exceptions import RedisError

    from bot.bus.cluster_status import describe_cluster
    from bot.bus.redis import RedisBus

    assert config.bus.url is not None
    try:
        return asyncio.run(describe_cluster(RedisBus(config.bus.url, consumer="status")))
    except (RedisError, OSError) as exc:
        return [f"cannot reach redis: {exc}"]


def _exec_status(config: Config) -> str:
    """Whether exec is off, sandboxed, or running on the host with only the guard rail (and why)."""
    from bot.app import exec_launcher
    from bot.errors import ConfigError

    if not config.tools.exec.enabled:
        return "disabled (tools.exec.enabled: false)"
    try:
        return exec_launcher(config).description
    except ConfigError as exc:
        return f"cannot start: {exc}"


pairing_app = typer.Typer(help="Approve or revoke senders who asked to pair.", no_args_is_help=True)
app.add_typer(pairing_app, name="pairing")


def _pairing_book(ctx: typer.Context) -> PairingBook:
    from bot.access import PairingBook

    return PairingBook(_load(ctx.obj).state_dir / "pairing.json")


@pairing_app.command("list")
def pairing_list(ctx: typer.Context) -> None:
    """Show pending pairing codes and approved senders."""
    import time

    book = _pairing_book(ctx)
    pending = book.pending()
    if not pending:
        typer.echo("No pending pairing codes.")
    for entry in pending:
        age = int((time.time() - entry.created) / 60)
        typer.echo(f"{entry.channel:<9} {entry.code}  user {entry.user_id} ({entry.name or 'no name'}), {age} min ago")
    for channel, users in sorted(book.approved().items()):
        if users:
            typer.echo(f"approved on {channel}: {', '.join(users)}")


@pairing_app.command("approve")
def pairing_approve(ctx: typer.Context, channel: str, code: str) -> None:
    """Approve the sender who holds CODE on CHANNEL (takes effect without a restart)."""
    user_id = _pairing_book(ctx).approve(channel, code)
    if user_id is None:
        typer.echo(f"No pending code {code.upper()} on {channel} (codes expire after an hour).", err=True)
        raise typer.Exit(1)
    typer.echo(f"Approved {channel} user {user_id}.")


@pairing_app.command("revoke")
def pairing_revoke(ctx: typer.Context, channel: str, user_id: str) -> None:
    """Remove an approved sender."""
    if not _pairing_book(ctx).revoke(channel, user_id):
        typer.echo(f"{channel} user {user_id} was not approved.", err=True)
        raise typer.Exit(1)
    typer.echo(f"Revoked {channel} user {user_id}.")


cron_app = typer.Typer(help="Scheduled prompts and reminders.", no_args_is_help=True)
app.add_typer(cron_app, name="cron")


def _cron_call(ctx: typer.Context, action: Callable[[CronService], Any]) -> Any:
    """Open the job store (without firing anything), run `action` on it, close it."""
    import asyncio

    from bot.scheduler.cron import CronService

    config = _load(ctx.obj)

    async def call() -> Any:
        service = CronService(config.state_dir, config.timezone, config.scheduler.misfire_grace)
        await service.start(paused=True)
        try:
            return action(service)
        finally:
            await service.stop()

    return asyncio.run(call())


def _notify_gateway(ctx: typer.Context, request: dict[str, Any]) -> dict[str, Any] | None:
    from bot.app import control_socket
    from bot.control import send_control

    return send_control(control_socket(_load(ctx.obj)), request)


@cron_app.command("list")
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


@cron_app.command("add")
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
    from bot.scheduler.schedules import Schedule, ScheduleError

    schedules = [(kind, value) for kind, value in (("every", every), ("cron", cron), ("at", at)) if value]
    texts = [(kind, value) for kind, value in (("message", message), ("remind", remind)) if value]
    if len(schedules) != 1:
        raise typer.BadParameter("give exactly one of --every, --cron or --at")
    if len(texts) != 1:
        raise typer.BadParameter("give exactly one of --message or --remind")
    try:
        target = ChatRef.parse(to)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--to") from None
    config = _load(ctx.obj)
    schedule = Schedule(schedules[0][0], schedules[0][1], tz or config.timezone)  # type: ignore[arg-type]
    is_owner_dm = f"{target.channel}:{target.chat_id}" in config.owners
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
                is_direct=is_owner_dm,  # type: ignore[arg-type]
            ),
        )
    except ScheduleError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    running = _notify_gateway(ctx, {"op": "cron.changed"}) is not None
    next_run = f"{job.next_run:%Y-%m-%d %H:%M %Z}" if job.next_run else "never"
    typer.echo(f"Added job {job.id}; next run {next_run}." + ("" if running else " (The gateway is not running.)"))


@cron_app.command("remove")
def cron_remove(ctx: typer.Context, job_id: str) -> None:
    """Remove a job."""
    if not _cron_call(ctx, lambda service: service.remove(job_id)):
        typer.echo(f"No job {job_id}.", err=True)
        raise typer.Exit(1)
    _notify_gateway(ctx, {"op": "cron.changed"})
    typer.echo(f"Removed job {job_id}.")


@cron_app.command("run")
def cron_run(ctx: typer.Context, job_id: str) -> None:
    """Fire a job now, in the running gateway."""
    reply = _notify_gateway(ctx, {"op": "cron.run", "id": job_id})
    if reply is None:
        typer.echo("The gateway is not running; start it with `relaybot run`.", err=True)
        raise typer.Exit(1)
    if not reply.get("ok"):
        typer.echo(f"Job {job_id} failed: {reply.get('error')}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Job {job_id} ran and was delivered.")


def main() -> None:
    """Console-script entry point."""
    app()
