"""The agent's parts built from the config alone: tools and their policy, skills, plugins, model providers."""

from __future__ import annotations

import logging
from pathlib import Path

from bot.agent.context.budget import ContextBudget
from bot.agent.context.builder import ContextBuilder
from bot.app.channel_kinds import upload_limits
from bot.bus import Trust
from bot.config.schema import Config, LLMConfig
from bot.hooks.handlers import Hooks
from bot.llm.images import ImageModel
from bot.llm.keys import inherited_key
from bot.llm.types import Provider
from bot.memory.file_writes import MemoryFileGuard
from bot.plugins.approvals import ApprovalMode
from bot.plugins.loader import Plugins, load_plugins
from bot.retry import RetryPolicy
from bot.setup.home import bundled
from bot.skills import SkillLibrary
from bot.tools.base import Tool, ToolRegistry
from bot.tools.chat_files import ChatFiles
from bot.tools.fetch.netguard import any_address, is_public
from bot.tools.fetch.page import WebFetchTool
from bot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from bot.tools.message import MessageTool
from bot.tools.protected import ProtectedPaths
from bot.tools.sandbox.exec_sandbox import SECRET_NAME, HostShell
from bot.tools.sandbox.launcher import exec_launcher
from bot.tools.search.choose import search_tool
from bot.tools.send_file import SendFileTool
from bot.tools.shell import ExecTool
from bot.tools.skills import LoadSkillTool
from bot.tools.workspace import WorkspacePaths
from bot.usage.model_stack import ProviderFactory

logger = logging.getLogger(__name__)


def exec_tool(config: Config, rules: ProtectedPaths) -> ExecTool:
    """exec with its launcher, told every secret it must keep out of its output and the rules it may not change."""
    launcher = exec_launcher(config)
    if isinstance(launcher, HostShell) and config.tools.exec.sandbox == "auto":
        logger.warning("exec is %s", launcher.description)
    named = [value for name, value in config.tools.exec.env.items() if SECRET_NAME.search(name)]
    return ExecTool(config.workspace, config.tools.exec.timeout, [*config.secrets(), *named], launcher, rules)


def approval_mode(config: Config) -> ApprovalMode:
    """`tools.exec.approval`, except that every command asks while `auto` finds no sandbox to run it in."""
    exec_config = config.tools.exec
    if not exec_config.enabled:
        return "off"
    if exec_config.sandbox == "auto" and isinstance(exec_launcher(config), HostShell):
        return "unsandboxed"
    return exec_config.approval


def build_registry(
    config: Config, skills: SkillLibrary, hooks: Hooks | None = None, rules: ProtectedPaths | None = None
) -> ToolRegistry:
    """The tools this bot offers, each given only its part of the config, with the guest set."""
    paths = WorkspacePaths(config.workspace, config.tools.restrict_to_workspace)
    memory = MemoryFileGuard(config.workspace / "memory", config.timezone)
    tools: list[Tool] = [
        ReadFileTool(paths),
        WriteFileTool(paths, memory),
        EditFileTool(paths, memory),
        ListDirTool(paths),
    ]
    if config.tools.exec.enabled:
        tools.append(exec_tool(config, rules or ProtectedPaths(config.workspace, config.tools.protected_paths)))
    tools.append(search_tool(config.tools.web_search))
    tools.append(WebFetchTool(any_address if config.tools.web_fetch.allow_private else is_public))
    tools.append(MessageTool())
    tools.append(SendFileTool(WorkspacePaths(config.workspace, restrict=True), upload_limits()))
    tools.append(LoadSkillTool(skills))
    return ToolRegistry(tools, role_tools(config), hooks=hooks)


def role_tools(config: Config) -> dict[Trust, list[str]]:
    """The tool names each role below owner may call (`tools.by_role`)."""
    by_role = config.tools.by_role
    return {Trust.GUEST: by_role.guest, Trust.USER: by_role.user, Trust.ADMIN: by_role.admin}


def image_model(config: Config) -> ImageModel:
    """`tools.image`'s model, with the llm section's API base where it sets none, and its key where the base is
    the llm's (see `bot.llm.keys` for the environment)."""
    image, llm = config.tools.image, config.llm
    api_base = image.api_base or llm.api_base
    own_key = image.api_key.get_secret_value()
    key = inherited_key(own_key, image.api_base, llm.api_key.get_secret_value(), llm.api_base)
    return ImageModel(image.model, api_base, key, image.size, image.quality, image.timeout)


def plugins_for(config: Config) -> Plugins:
    """The plugins from the `relaybot.plugins` entry points and the config's `plugins` list."""
    base = config.source.parent if config.source else Path.cwd()
    return load_plugins([entry.spec for entry in config.plugins], base)


def skill_library(config: Config) -> SkillLibrary:
    """The bundled skills, then the workspace's own."""
    own = bundled("skills")
    return SkillLibrary([own, config.workspace / "skills"], installed=[own])


def provider_factory(config: Config, given: Provider | None, retry: RetryPolicy | None) -> ProviderFactory:
    """Makes each model's provider; `given` (a test's) serves the config's own model."""

    def make(llm: LLMConfig) -> Provider:
        from bot.llm.provider import ModelProvider

        if given is not None and llm == config.llm:
            return given
        return ModelProvider(llm, retry)

    return make


def context_builder(config: Config, skills: SkillLibrary, budget: ContextBudget, files: ChatFiles) -> ContextBuilder:
    """The system prompt and history builder, within the agent's size limits."""
    agent = config.agent
    return ContextBuilder(
        config.workspace,
        config.timezone,
        skills=skills,
        max_tool_result_chars=agent.max_tool_result_chars,
        memory_chars=budget.memory_chars,
        max_inbound_chars=agent.max_inbound_chars,
        inline_attachment_chars=agent.inline_attachment_chars,
        files=files,
    )
