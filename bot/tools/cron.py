"""The cron tool: the model schedules prompts and reminders for the chat it is talking in."""

from __future__ import annotations

from typing import Any

from bot.bus import ChatRef, Trust
from bot.errors import ToolError
from bot.scheduler.cron import CronService
from bot.scheduler.limits import Action
from bot.scheduler.schedules import Schedule, ScheduleError, ScheduleKind
from bot.tools.base import Tool, ToolContext

_SCHEDULE_KINDS: tuple[ScheduleKind, ...] = ("every", "cron", "at")
_ACTIONS: tuple[Action, ...] = ("message", "remind")


class CronTool(Tool):
    """add / list / remove jobs; guests only ever touch their own chat."""

    name: str = "cron"
    description: str = (
        "Schedule work for this chat. action=add with exactly one schedule (every: '30m'/'1d', "
        "cron: 5-field expression such as '0 8 * * 1-5', at: ISO date-time) and exactly one of "
        "message (a prompt you will answer at that time, e.g. 'summarise the news') or remind "
        "(text delivered word for word, no model involved; use it for plain reminders). "
        "action=list shows this chat's jobs; action=remove takes job_id. Limits: a prompt at most every "
        "minute (for guests every hour); for guests a reminder at most every minute and 5 jobs in all."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "remove"]},
            "every": {"type": "string", "description": "Repeat interval such as 30m, 2h, 1d."},
            "cron": {"type": "string", "description": "5-field cron expression: minute hour day month weekday."},
            "at": {"type": "string", "description": "One-off ISO date-time, such as 2026-12-24T18:00."},
            "timezone": {"type": "string", "description": "IANA timezone of the schedule; default: the bot's."},
            "message": {"type": "string", "description": "Prompt to run at that time."},
            "remind": {"type": "string", "description": "Reminder text delivered as-is."},
            "name": {"type": "string", "description": "Short name for the job."},
            "job_id": {"type": "string", "description": "Job to remove."},
            "to": {"type": "string", "description": "Owners only: another chat, channel:chat_id."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def __init__(self, cron: CronService, default_timezone: str) -> None:
        self._cron = cron
        self._timezone = default_timezone

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        target = self._target(args.get("to"), ctx)
        if args["action"] == "list":
            jobs = self._cron.jobs(target)
            if not jobs:
                return f"No jobs for {target.session_key}."
            return "\n".join(
                f"{job.id}: {job.name!r}, {job.payload.schedule}, {job.payload.action} {job.payload.text!r}, "
                f"next run {job.next_run:%Y-%m-%d %H:%M %Z}"
                for job in jobs
                if job.next_run
            )
        if args["action"] == "remove":
            job_id = args.get("job_id") or ""
            if not self._cron.remove(job_id, None if ctx.trust is Trust.OWNER else ctx.chat):
                raise ToolError(f"no job {job_id!r} in this chat; use action=list to see the ids")
            return f"Removed job {job_id}."
        return self._add(args, target, ctx)

    def _add(self, args: dict[str, Any], target: ChatRef, ctx: ToolContext) -> str:
        schedules = [kind for kind in _SCHEDULE_KINDS if args.get(kind)]
        actions = [action for action in _ACTIONS if args.get(action)]
        if len(schedules) != 1:
            raise ToolError("give exactly one of every, cron or at")
        if len(actions) != 1:
            raise ToolError("give exactly one of message or remind")
        schedule = Schedule(schedules[0], args[schedules[0]], args.get("timezone") or self._timezone)
        is_direct = ctx.is_direct if target == ctx.chat else False
        try:
            job = self._cron.add(
                schedule,
                target,
                actions[0],
                args[actions[0]],
                args.get("name"),
                ctx.trust,
                is_direct,
                creator=ctx.person or f"{ctx.chat.channel}:{ctx.sender_id}",
            )
        except ScheduleError as exc:
            raise ToolError(str(exc)) from None
        when = f"{job.next_run:%Y-%m-%d %H:%M %Z}" if job.next_run else "never"
        return f"Scheduled job {job.id} ({schedule.describe()}) for {target.session_key}; next run {when}."

    def _target(self, to: str | None, ctx: ToolContext) -> ChatRef:
        if to is None:
            return ctx.chat
        if ctx.trust is not Trust.OWNER:
            raise ToolError("only the bot's owners may schedule jobs for another chat")
        try:
            return ChatRef.parse(to)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
