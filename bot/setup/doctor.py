"""`relaybot doctor`: one line per check of what the bot needs, each with the fix when it fails."""

from __future__ import annotations

import asyncio
import shutil
import stat
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.bus.messages import channel_key
from bot.config.schema import Config
from bot.config.schema_tools import MCPServerConfig
from bot.setup.check import Check, Probe
from bot.setup.embeddings_check import check_embeddings
from bot.setup.model_check import check_model

if TYPE_CHECKING:
    from bot.skills import SkillLibrary

ToolSchemas = Callable[["SkillLibrary"], list[dict[str, Any]]]  # the owner's tool definitions, given these skills

LOW_DISK = 1024**3
NO_DISK = 100 * 1024**2
HTTP_TIMEOUT = 10.0
EXCHANGE_TOKENS = 200  # a short question and answer


def exec_description(config: Config) -> tuple[bool, str]:
    """Whether exec runs in the sandbox, and how it runs (the launcher the gateway would pick)."""
    from bot.errors import ConfigError
    from bot.tools.sandbox.exec_sandbox import HostShell
    from bot.tools.sandbox.launcher import exec_launcher

    try:
        launcher = exec_launcher(config)
    except ConfigError as exc:
        return False, str(exc)
    return not isinstance(launcher, HostShell), launcher.description


def check_folder(name: str, path: Path) -> Check:
    """A folder that must exist and be private to the bot's user."""
    if not path.is_dir():
        return Check(name, "fail", f"{path} is missing", "run `relaybot init`")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return Check(name, "warn", f"{path} is readable by others (mode {mode:o})", f"chmod 700 {path}")
    return Check(name, "ok", f"{path} (private)")


def check_disk(path: Path) -> Check:
    """Free space where the state lives."""
    target = path if path.exists() else path.parent
    free = shutil.disk_usage(target).free
    text = f"{free / 1024**3:.1f} GiB free at {target}"
    if free < NO_DISK:
        return Check("disk", "fail", text, "free some space: sessions and logs need room to be written")
    if free < LOW_DISK:
        return Check("disk", "warn", text, "free some space soon")
    return Check("disk", "ok", text)


def check_sandbox(config: Config, describe: Callable[[Config], tuple[bool, str]] = exec_description) -> Check:
    """exec's sandbox: ✗ when `auto` finds none (each command then waits for approval), ⚠ when switched off."""
    if not config.tools.exec.enabled:
        return Check("exec sandbox", "ok", "exec is disabled")
    sandboxed, description = describe(config)
    if sandboxed:
        return Check("exec sandbox", "ok", description)
    install = "install bubblewrap (Debian: apt-get install bubblewrap)"
    if config.tools.exec.sandbox == "off":
        return Check("exec sandbox", "warn", description, install)
    return Check(
        "exec sandbox",
        "fail",
        f"{description}; every command waits for an owner's /approve",
        f"{install}, or set tools.exec.sandbox: off to run commands on the host without asking",
    )


def check_python(config: Config, problem: Callable[[], str | None] | None = None) -> Check:
    """run_python: ⚠ when bubblewrap cannot run here, since then the tool is not offered at all."""
    if not config.tools.python.enabled:
        return Check("run_python", "ok", "run_python is disabled")
    if problem is None:
        from bot.tools.sandbox.python_sandbox import sandbox_problem

        problem = sandbox_problem
    found = problem()
    if found is None:
        return Check("run_python", "ok", "runs in the bubblewrap sandbox (no network, limits on time and memory)")
    return Check("run_python", "warn", found, "install bubblewrap (Debian: apt-get install bubblewrap)")


def check_gateway(status: dict[str, Any] | None) -> Check:
    """Whether a gateway is running (information only)."""
    from bot.setup.gateway_status import describe_uptime

    return Check("gateway", "ok", describe_uptime(status))


async def check_context(config: Config, tool_schemas: ToolSchemas) -> Check:
    """Whether the window leaves room for the last exchanges after the system prompt, tools and reply reserve (✗ when
    it cannot even hold the prompt and the tools)."""
    import json

    from bot.agent.context.budget import MIN_EXCHANGES, MIN_REPLY_RESERVE
    from bot.agent.context.builder import ContextBuilder
    from bot.bus import ChatRef, InboundMessage, Trust
    from bot.llm.context_window import DEFAULT_WINDOW, ContextWindow
    from bot.llm.tokens import CHARS_PER_TOKEN
    from bot.memory.files import scope_for
    from bot.setup.home import bundled
    from bot.skills import SkillLibrary

    measured = await ContextWindow(config.llm).measured()
    window = measured or DEFAULT_WINDOW
    said = f"{window:,} tokens" if measured else f"unknown (neither the server nor litellm says it), {window:,} assumed"
    skills = SkillLibrary([bundled("skills"), config.workspace / "skills"])
    message = InboundMessage(ChatRef("console", "local"), "owner", "", trust=Trust.OWNER)
    prompt = ContextBuilder(config.workspace, config.timezone, skills=skills).system_prompt(
        message, scope_for(config.workspace, message)
    )
    tools = json.dumps(tool_schemas(skills))
    fixed = (len(prompt) + len(tools)) // CHARS_PER_TOKEN
    reserve = min(config.llm.max_tokens, MIN_REPLY_RESERVE)
    if fixed > window:
        return Check(
            "context window",
            "fail",
            f"{said}, but the system prompt and tools alone take about {fixed:,}: every message would fail",
            "set llm.context_window to the model's real window, or use a model with a larger one",
        )
    room = window - reserve - fixed
    text = f"{said}; the system prompt and tools take about {fixed:,}, leaving {max(room, 0):,} for history"
    if not measured:
        return Check("context window", "warn", text, "set llm.context_window to the model's real window")
    if room < MIN_EXCHANGES * EXCHANGE_TOKENS:
        return Check(
            "context window",
            "warn",
            text,
            "set llm.context_window to the model's real window (or lower llm.max_tokens)",
        )
    return Check("context window", "ok", text)


async def check_mcp(name: str, server: MCPServerConfig) -> Check:
    """One MCP server: its tool count, or a warning saying why it cannot start (the bot runs without its tools)."""
    from bot.tools.mcp.servers import describe

    up, detail = await describe(server)
    if up:
        return Check(f"mcp {name}", "ok", detail)
    key = f"mcp_servers.{name}"
    fix = f"check {key}.url and that the server is running" if server.url else f"check {key}.command, args and cwd"
    return Check(f"mcp {name}", "warn", detail, fix)


async def run_checks(
    config: Config, gateway: dict[str, Any] | None, tool_schemas: ToolSchemas, platforms: Mapping[str, Probe]
) -> list[Check]:
    """Every check after the config loaded, in the order a new user fixes things; `platforms` holds each chat
    platform's credential probe by name, asked for each bot of an enabled one."""
    checks = [check_folder("workspace", config.workspace), check_folder("state", config.state_dir)]
    probes: list[Awaitable[Check | list[Check]]] = [check_model(config), check_context(config, tool_schemas)]
    if config.memory.embeddings is not None:
        probes.append(check_embeddings(config.memory.embeddings))
    for name, section in config.channels.chat_sections().items():
        probe = platforms.get(name)
        if probe is not None and section.enabled:
            index = {account.name: i for i, account in enumerate(section.account_entries())}
            for account, bot in section.bots().items():
                where = f"channels.{name}" + (f".accounts[{index[account]}]" if account else "")
                probes.append(probe(channel_key(name, account), bot, HTTP_TIMEOUT, where))
    probes += [check_mcp(name, server) for name, server in config.mcp_servers.items()]
    for outcome in await asyncio.gather(*probes):
        checks.extend(outcome if isinstance(outcome, list) else [outcome])
    checks += [check_sandbox(config), check_python(config), check_gateway(gateway), check_disk(config.state_dir)]
    return checks


async def check_agent(name: str, config: Config, tool_schemas: ToolSchemas) -> list[Check]:
    """A further agent's own checks (its folders, model and context window), each line named after the agent."""
    from dataclasses import replace

    folders = [
        check_folder(label, path)
        if path.exists()
        else Check(label, "ok", f"{path} (made on the agent's first message)")
        for label, path in (("workspace", config.workspace), ("state", config.state_dir))
    ]
    probes = await asyncio.gather(check_model(config), check_context(config, tool_schemas))
    return [replace(check, name=f"agent {name}: {check.name}") for check in [*folders, *probes]]
