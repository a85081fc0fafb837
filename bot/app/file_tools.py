"""A chat's files for a config: their book, list_files and read_document, and run_python where bubblewrap runs."""

from __future__ import annotations

import logging

from bot.app.channel_kinds import upload_limits
from bot.bus import Trust
from bot.config.paths import files_path
from bot.config.schema import Config
from bot.files.records import FileBook
from bot.tools.base import Tool
from bot.tools.chat_files import ChatFiles
from bot.tools.documents import ListFilesTool, ReadDocumentTool
from bot.tools.run_python import RunPythonTool
from bot.tools.sandbox.python_sandbox import PythonLimits, available_libraries, python_sandbox, sandbox_problem
from bot.tools.send_file import SendFileTool
from bot.tools.workspace import WorkspacePaths
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.python_time import PythonTime

logger = logging.getLogger(__name__)


def chat_files(config: Config) -> ChatFiles:
    """The records of every chat's files (`state_dir/files.db`), paths kept relative to the workspace."""
    return ChatFiles(FileBook(files_path(config), config.workspace), config.workspace)


def file_tools(config: Config, files: ChatFiles, ledger: Ledger, guard: BudgetGuard | None) -> list[Tool]:
    """list_files and read_document for every role, send_file taking file ids, and run_python when it can be offered."""
    send = SendFileTool(WorkspacePaths(config.workspace, restrict=True), upload_limits(), files)  # takes file ids too
    tools: list[Tool] = [ListFilesTool(files, config.timezone), ReadDocumentTool(files), send]
    if python := python_tool(config, files, ledger, guard):
        tools.append(python)
    return tools


def python_tool(config: Config, files: ChatFiles, ledger: Ledger, guard: BudgetGuard | None) -> RunPythonTool | None:
    """run_python when `tools.python` is on and bubblewrap runs here; never without the sandbox."""
    python = config.tools.python
    if not python.enabled:
        return None
    limits = PythonLimits(python.timeout, python.memory_mb, python.processes, python.disk_mb)
    sandbox = python_sandbox(limits)
    if sandbox is None:
        logger.warning("run_python is not offered: %s", sandbox_problem() or "bubblewrap cannot run here")
        return None
    seconds = python.daily_seconds
    daily = {
        Trust.GUEST: seconds.guest,
        Trust.USER: seconds.user,
        Trust.ADMIN: seconds.admin,
        Trust.OWNER: seconds.owner,
    }
    meter = PythonTime(ledger, daily, config.timezone, guard)
    return RunPythonTool(sandbox, files, config.workspace, meter, available_libraries(), upload_limits())
