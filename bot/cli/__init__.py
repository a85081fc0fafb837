"""The `relaybot` command line; heavy modules load inside the commands that need them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.access.pairing import Pairing
    from bot.config import Config, MCPServerConfig
    from bot.scheduler.cron import CronService

app = typer.Typer(
    help="relaybot: a self-hosted AI assistant for Telegram, Discord and Slack.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

GATEWAY_LOG = "relaybot.log"
CONTROL_TIMEOUT = 10.0
CRON_RUN_TIMEOUT = 930.0  # above the scheduler's own delivery timeout (a prompt job runs a whole turn)
CHAT_LOG = "chat.log"

LogMode = Literal["stderr", "gateway", "chat"]


@dataclass(frozen=True)
class Options:
    config: Path
    log_level: str | None


def _version(value: bool) -> None:
    if value:
        from bot import __version__

        typer.echo(f"relaybot {__version__}")
        raise typer.Exit()


@app.callback()
def options(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", "-c", help="Config file (default: $RELAYBOT_CONFIG or ~/.relaybot/config.yaml)."
    ),
    log_level: str | None = typer.Option(
        None, "--log-level", help="trace, debug, info, warning or error (trace also shows libraries' debug lines)."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Global options."""
    from bot.config import config_path
    from bot.logs import LOG_LEVELS
    from bot.setup.filemodes import private_umask

    private_umask()  # whatever the command creates under the relaybot home is private
    if log_level is not None and log_level.lower() not in LOG_LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LOG_LEVELS)}", param_hint="--log-level")
    ctx.obj = Options(config_path(config), log_level.lower() if log_level else None)


def _load(options: Options, mode: LogMode = "stderr") -> Config:
    """Load the config or exit 2 with one clear line; set up logging for the command's `mode`."""
    from bot.config import load_config
    from bot.errors import ConfigError
    from bot.logs import log_dir, setup_logging

    try:
        config = load_config(options.config)
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
    level = options.log_level
    if mode == "gateway":
        setup_logging(level or "info", config.secrets(), file=log_dir(config.state_dir) / GATEWAY_LOG)
    elif mode == "chat" and level is None:
        # The conversation owns the terminal: log lines go to a file instead.
        setup_logging("info", config.secrets(), file=log_dir(config.state_dir) / CHAT_LOG, stderr=False)
    else:
        setup_logging(level or "warning", config.secrets())
    return config


@app.command()
def init(
    ctx: typer.Context,
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Ask nothing: copy the example config and the workspace, as scripts want."
    ),
) -> None:
    """Create the config and the workspace, asking for the model and channels on a terminal; add new config keys."""
    import sys

    from bot.config import home_dir, load_config
    from bot.errors import ConfigError
    from bot.setup.home import InitReport, add_new_keys, init_config, init_workspace
    from bot.setup.webtoken import chat_url, write_api_token

    options: Options = ctx.obj
    report = InitReport()
    existed = options.config.exists()
    init_config(options.config, report)
    if existed:
        add_new_keys(options.config, report)
    elif not non_interactive and sys.stdin.isatty():
        _ask_for_settings(options.config)
    token = write_api_token(options.config) if options.config in report.created else None
    try:
        config = load_config(options.config)
    except ConfigError as exc:
        typer.echo(f"note: the config has a problem: {exc}", err=True)
        config = None
    workspace = config.workspace if config else home_dir() / "workspace"
    init_workspace(workspace, report)
    if config:
        config.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for path in report.created:
        typer.echo(f"created {path}")
    for path in report.kept:
        typer.echo(f"kept    {path} (already there)")
    if token and config:
        api = config.channels.api
        typer.echo(f"\nWeb chat (once channels.api.enabled is true): {chat_url(api.host, api.port, token)}")
    if report.added_keys:
        typer.echo(f"added to {options.config}, commented out with their defaults: {', '.join(report.added_keys)}")
    if config and not existed and not non_interactive and sys.stdin.isatty():
        import asyncio

        from bot.setup.doctor import run_checks

        typer.echo("\nChecking the setup (`relaybot doctor` runs these again):")
        for check in asyncio.run(run_checks(config, _gateway_status(config))):
            typer.echo(check.line())
    typer.echo(
        f"\nNext: check llm.model (and llm.api_key, or export OPENAI_API_KEY) in {options.config},\n"
        "run `relaybot doctor`, talk to the bot with `relaybot chat`, then connect a chat app and `relaybot run`."
    )


def _ask_for_settings(config_file: Path) -> None:
    """Ask for the model, its key or server, and the channels; write the answers into the new config."""
    from bot.setup.init_wizard import apply_settings, ask_settings

    def ask(question: str, default: str, hidden: bool) -> str:
        return str(typer.prompt(question, default=default, hide_input=hidden, show_default=bool(default))).strip()

    def confirm(question: str) -> bool:
        return typer.confirm(question, default=False)

    typer.echo(f"Setting up {config_file} (Enter keeps the default; every answer can be changed there later).")
    settings = ask_settings(ask, confirm)
    config_file.write_text(apply_settings(config_file.read_text(encoding="utf-8"), settings), encoding="utf-8")


@app.command()
def chat(
    ctx: typer.Context,
    message: str | None = typer.Option(None, "--message", "-m", help="Ask once, print the answer and exit."),
) -> None:
    """Chat with the bot in this terminal (logs go to state_dir/logs/chat.log unless --log-level is given)."""
    config = _load(ctx.obj, "chat")
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
    """Start the gateway: the agent and every enabled channel (logs also go to state_dir/logs/relaybot.log)."""
    from bot.cluster.roles import ROLES

    if role not in ROLES:
        raise typer.BadParameter(f"use one of {', '.join(ROLES)}", param_hint="--role")
    config = _load(ctx.obj, "gateway")
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
    """Show the config in use, the model, and each channel as the running gateway sees it."""
    config = _load(ctx.obj)
    from bot.app import CHANNEL_CLASSES, journal_path
    from bot.bus.journal import describe_journal
    from bot.setup.gateway_status import describe_channel, describe_uptime

    options: Options = ctx.obj
    sessions = config.state_dir / "sessions"
    count = len(list(sessions.glob("*.jsonl"))) if sessions.exists() else 0
    where = "sessions in redis" if config.bus.backend == "redis" else f"{count} sessions"
    typer.echo(f"config:    {options.config}")
    typer.echo(f"workspace: {config.workspace}")
    typer.echo(f"state:     {config.state_dir} ({where})")
    typer.echo(f"model:     {config.llm.model}" + (f" at {config.llm.api_base}" if config.llm.api_base else ""))
    reply = _ask_gateway(config, {"op": "status"}, timeout=CONTROL_TIMEOUT)
    typer.echo(f"gateway:   {describe_uptime(reply)}")
    if reply and reply.get("context"):
        typer.echo(f"warning:   {reply['context']}")
    health = (reply or {}).get("channels") or {}
    for name in CHANNEL_CLASSES:
        enabled = getattr(config.channels, name).enabled
        typer.echo(f"{name + ':':<10} {describe_channel(enabled, health.get(name), reply is not None)}")
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

    from bot.tools.mcp import describe

    return asyncio.run(describe(server))[1]


def _cluster_lines(config: Config) -> list[str]:
    """The cluster view from Redis, or one line saying why it cannot be read."""
    import asyncio

    from redis.exceptions import RedisError

    from bot.bus.redis.bus import RedisBus
    from bot.cluster.status import describe_cluster

    assert config.bus.url is not None
    try:
        return asyncio.run(describe_cluster(RedisBus(config.bus.url, prefix=config.bus.prefix, consumer="status")))
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


@app.command()
def doctor(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON.")) -> None:
    """Check the config, folders, model, channels, MCP servers, sandbox, gateway and disk; exit 1 on any ✗."""
    import asyncio
    import json

    from bot.setup.doctor import run_checks

    options: Options = ctx.obj
    checks = _config_check(options)
    if checks[0].status == "ok":
        config = _load(options)
        checks += asyncio.run(run_checks(config, _gateway_status(config)))
    if as_json:
        typer.echo(json.dumps([check.as_dict() for check in checks], indent=2, ensure_ascii=False))
    else:
        for check in checks:
            typer.echo(check.line())
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(1)


@app.command()
def logs(
    ctx: typer.Context,
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new lines until Ctrl-C."),
    lines: int = typer.Option(50, "--lines", "-n", help="How many of the last lines to show."),
) -> None:
    """Show the gateway's log file (state_dir/logs/relaybot.log)."""
    import contextlib

    from bot.logs import follow_lines, last_lines, log_dir

    path = log_dir(_load(ctx.obj).state_dir) / GATEWAY_LOG
    if not path.exists():
        typer.echo(f"No log yet at {path}; `relaybot run` writes it.", err=True)
        raise typer.Exit(1)
    for line in last_lines(path, lines):
        typer.echo(line, nl=False)
    if follow:
        with contextlib.suppress(KeyboardInterrupt):
            for line in follow_lines(path):
                typer.echo(line, nl=False)


@app.command()
def plugins(ctx: typer.Context) -> None:
    """List the loaded plugins and what each registered."""
    from bot.app import plugins_for

    loaded = plugins_for(_load(ctx.obj)).loaded
    if not loaded:
        typer.echo("No plugins loaded (add some under `plugins:` in the config).")
    for record in loaded:
        parts = [
            f"{label} {', '.join(prefix + name for name in dict.fromkeys(names))}"
            for label, prefix, names in (
                ("hooks", "", record.hooks),
                ("commands", "/", record.commands),
                ("tools", "", record.tools),
                ("channels", "", record.channels),
            )
            if names
        ]
        typer.echo(f"{record.plugin}: {'; '.join(parts) or 'nothing registered'}")


pairing_app = typer.Typer(help="Approve or revoke senders who asked to pair.", no_args_is_help=True)
app.add_typer(pairing_app, name="pairing")


def _pairing_book(ctx: typer.Context) -> Pairing:
    """The pairing state the gateways use: `state/pairing.json`, or Redis on the redis bus."""
    from bot.app.stores import pairing_book
    from bot.cluster.redis import shared_state

    config = _load(ctx.obj)
    return pairing_book(config, shared_state(config))


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
        from bot.cluster.redis import shared_state

        shared = shared_state(config)  # on the redis bus, the shared store; adding or removing tells the leader
        service = CronService(config.state_dir, config.timezone, config.scheduler.misfire_grace, shared=shared)
        await service.start(paused=True)
        try:
            return action(service)
        finally:
            await service.stop()
            if shared is not None:
                await shared.aclose()

    return asyncio.run(call())


def _ask_gateway(config: Config, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
    """One request to the running gateway; None when none runs; exit 1 in one line when it does not answer."""
    from bot.app import control_socket
    from bot.app.control import send_control
    from bot.errors import GatewayUnreachable

    try:
        return send_control(control_socket(config), request, CONTROL_TIMEOUT if timeout is None else timeout)
    except GatewayUnreachable as exc:
        typer.echo(f"error: {exc}; check it with `relaybot logs`.", err=True)
        raise typer.Exit(1) from None


def _config_check(options: Options) -> list[Any]:
    """The doctor's first line: whether the config file loads."""
    from bot.config import load_config
    from bot.errors import ConfigError
    from bot.setup.doctor import Check

    try:
        load_config(options.config)
    except ConfigError as exc:
        return [Check("config", "fail", str(exc), "fix that key, or run `relaybot init` to create the file")]
    return [Check("config", "ok", f"{options.config} is valid")]


def _gateway_status(config: Config) -> dict[str, Any] | None:
    """The running gateway's status answer, or None when none runs or it does not answer."""
    from bot.app import control_socket
    from bot.app.control import send_control
    from bot.errors import GatewayUnreachable

    try:
        return send_control(control_socket(config), {"op": "status"}, CONTROL_TIMEOUT)
    except GatewayUnreachable:
        return None


def _check_target(config: Config, channel: str) -> None:
    """Exit 2 in one line unless `channel` is a chat channel that is enabled."""
    from bot.app import CHANNEL_CLASSES, enabled_channels

    if channel not in CHANNEL_CLASSES:
        known = ", ".join(CHANNEL_CLASSES)
        raise typer.BadParameter(f"no channel {channel!r}; channels are {known}", param_hint="--to")
    if channel not in enabled_channels(config):
        raise typer.BadParameter(
            f"channel {channel} is not enabled; set channels.{channel}.enabled: true first", param_hint="--to"
        )


def _cron_changed(config: Config) -> bool:
    """Tell the running gateway to re-read the jobs (the redis store tells its leader itself); False when none runs."""
    if config.bus.backend == "redis":
        from bot.cluster.redis import RedisState
        from bot.scheduler.cluster_run import scheduler_leader

        assert config.bus.url is not None
        state = RedisState(config.bus.url, config.bus.prefix)
        try:
            return scheduler_leader(state) is not None
        finally:
            state.client.close()
    return _ask_gateway(config, {"op": "cron.changed"}) is not None


def _cron_run_in_cluster(config: Config, job_id: str) -> dict[str, Any] | None:
    """Fire a job on the redis bus from here and wait for its outcome; None when no process leads the scheduler."""
    import asyncio

    from bot.cluster.redis import RedisState
    from bot.scheduler.cluster_run import run_in_cluster, scheduler_leader

    assert config.bus.url is not None
    state = RedisState(config.bus.url, config.bus.prefix)

    async def call() -> dict[str, Any] | None:
        try:
            if scheduler_leader(state) is None:
                return None
            return await asyncio.wait_for(run_in_cluster(config, state, job_id), CRON_RUN_TIMEOUT)
        except TimeoutError:
            return {"ok": False, "error": f"no outcome within {CRON_RUN_TIMEOUT:.0f}s"}
        finally:
            await state.aclose()

    return asyncio.run(call())


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
    _check_target(config, target.channel)
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
    running = _cron_changed(config)
    next_run = f"{job.next_run:%Y-%m-%d %H:%M %Z}" if job.next_run else "never"
    typer.echo(f"Added job {job.id}; next run {next_run}." + ("" if running else " (The gateway is not running.)"))


@cron_app.command("remove")
def cron_remove(ctx: typer.Context, job_id: str) -> None:
    """Remove a job."""
    if not _cron_call(ctx, lambda service: service.remove(job_id)):
        typer.echo(f"No job {job_id}.", err=True)
        raise typer.Exit(1)
    _cron_changed(_load(ctx.obj))
    typer.echo(f"Removed job {job_id}.")


@cron_app.command("run")
def cron_run(ctx: typer.Context, job_id: str) -> None:
    """Fire a job now, in the running gateway (on the redis bus, on the cluster)."""
    config = _load(ctx.obj)
    if config.bus.backend == "redis":
        reply = _cron_run_in_cluster(config, job_id)
    else:
        reply = _ask_gateway(config, {"op": "cron.run", "id": job_id}, timeout=CRON_RUN_TIMEOUT)
    if reply is None:
        typer.echo("The gateway is not running; start it with `relaybot run`.", err=True)
        raise typer.Exit(1)
    if not reply.get("ok"):
        typer.echo(f"Job {job_id} failed: {reply.get('error')}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Job {job_id} ran and was delivered.")


@app.command()
def usage(
    ctx: typer.Context,
    by: str = typer.Option("sender", "--by", help="Group by sender, chat, model or purpose."),
    since: str | None = typer.Option(None, "--since", help="7d, 12h or 2026-11-01 (default: start of this month)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON array, one object per group."),
    chart: bool = typer.Option(False, "--chart", help="Also draw tokens per day as a bar chart."),
) -> None:
    """Tokens and cost of every model call, from the usage ledger."""
    import time
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from bot.app.stores import usage_ledger
    from bot.cluster.redis import shared_state
    from bot.usage import report
    from bot.usage.ledger import GROUPS

    config = _load(ctx.obj)
    if by not in GROUPS:
        raise typer.BadParameter(f"use one of {', '.join(GROUPS)}", param_hint="--by")
    zone = ZoneInfo(config.timezone)
    now = time.time()
    try:
        start = report.since_timestamp(since, now, zone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since") from None
    ledger = usage_ledger(config, shared_state(config))
    try:
        groups = ledger.grouped(by, start)
        if as_json:
            typer.echo(report.as_json(groups))
            return
        typer.echo(report.as_table(groups, by))
        if chart:
            offset = datetime.now(zone).utcoffset()
            days = ledger.daily(start, offset.total_seconds() if offset else 0.0)
            typer.echo("")
            typer.echo(report.as_chart(days))
    finally:
        ledger.close()


def main() -> None:
    """Console-script entry point."""
    app()
