"""The usage ledger in Redis: every worker's calls in one place, with per-day counters that keep budget checks cheap."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.cluster.redis import RedisState, zset_members
from bot.usage.charge import BACKGROUND
from bot.usage.ledger import GROUPS, CallRecord, Totals
from bot.usage.periods import day_start, next_day

METRICS = ("calls", "in", "out", "cost", "priced")  # priced: calls with a known cost, so "unknown" stays apart from 0
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
COLUMNS = tuple(field.name for field in fields(CallRecord))  # a record's JSON: its fields' values in this order

# KEYS: calls (sorted set by ts), sequence, the day's counters (hash), days (sorted set of day ordinals),
# the month's counters (hash), months (sorted set of month numbers).
# ARGV: ts, the record as JSON, the day's ordinal, the month's number, prompt tokens, completion tokens,
# cost ('' when unknown), then the counter scopes the call adds to (the script adds each metric to each scope).
_RECORD = """
local seq = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[1], ARGV[1], string.format('%016d', seq) .. '|' .. ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[3])
redis.call('ZADD', KEYS[6], ARGV[4], ARGV[4])
local metrics = {'calls', 1, 'in', ARGV[5], 'out', ARGV[6]}
if ARGV[7] ~= '' then
  metrics[#metrics + 1] = 'cost'
  metrics[#metrics + 1] = ARGV[7]
  metrics[#metrics + 1] = 'priced'
  metrics[#metrics + 1] = 1
end
for i = 8, #ARGV do
  for m = 1, #metrics, 2 do
    local field = ARGV[i] .. '|' .. metrics[m]
    redis.call('HINCRBYFLOAT', KEYS[3], field, metrics[m + 1])
    redis.call('HINCRBYFLOAT', KEYS[5], field, metrics[m + 1])
  end
end
return seq
"""


def month_number(day: date) -> int:
    """Months counted from year 0, so they sort and a month's counters have a short key."""
    return day.year * 12 + day.month - 1


def scopes(call: CallRecord) -> list[str]:
    """The counter scopes a call adds to: everything, its sender, chat, model, purpose, and background work."""
    found = ["all", *(f"{column}={json.dumps(getattr(call, column))}" for column in GROUPS.values())]
    if call.sender is None and call.purpose in BACKGROUND:
        found.append("background")
    return found


@dataclass(slots=True)
class _Sums:
    """Running sums for one group, from single records and from day counters."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    priced: int = 0

    def add_call(self, call: CallRecord) -> None:
        self.calls += 1
        self.tokens_in += call.prompt_tokens
        self.tokens_out += call.completion_tokens
        if call.cost_usd is not None:
            self.cost += call.cost_usd
            self.priced += 1

    def add_counters(self, values: dict[str, Any]) -> None:
        """Add a day's counters for one scope (metric name -> value as Redis returned it, or None)."""
        number = {metric: float(values.get(metric) or 0) for metric in METRICS}
        self.calls += int(number["calls"])
        self.tokens_in += int(number["in"])
        self.tokens_out += int(number["out"])
        self.cost += number["cost"]
        self.priced += int(number["priced"])

    def totals(self, key: str | None) -> Totals:
        return Totals(key, self.calls, self.tokens_in, self.tokens_out, self.cost if self.priced else None)


class RedisUsageLedger:
    """`UsageLedger`'s interface on Redis: records in a sorted set by time, sums in per-day and per-month hashes.

    A sum since a local midnight (every budget period starts at one) reads only counters, whatever
    the number of calls: a monthly budget check one hash, a daily one the day's. A sum since any
    other moment adds the records of its first, partial day, read from the sorted set.
    """

    def __init__(self, state: RedisState, timezone: str) -> None:
        self._state = state
        self._zone = ZoneInfo(timezone)
        self._record = state.script(_RECORD)

    def record(self, call: CallRecord) -> None:
        """Append one call and add it to its day's counters, atomically (sent with this process's next command)."""
        local = datetime.fromtimestamp(call.ts, self._zone).date()
        day, month = local.toordinal(), month_number(local)
        keys = [self._key("calls"), self._key("seq"), self._day_key(day), self._key("days")]
        keys += [self._state.key("usage", "month", str(month)), self._key("months")]
        cost = "" if call.cost_usd is None else repr(call.cost_usd)
        record = json.dumps([getattr(call, column) for column in COLUMNS])
        args: list[Any] = [repr(call.ts), record, day, month, call.prompt_tokens, call.completion_tokens, cost]
        self._record.defer(keys=keys, args=[*args, *scopes(call)])

    def totals(
        self, since: float, sender: str | None = None, session_key: str | None = None, background: bool = False
    ) -> Totals:
        """Sums since `since` for a sender, a chat, background work (no sender), or everything."""

        def wanted(call: CallRecord) -> bool:
            return (
                (sender is None or call.sender == sender)
                and (session_key is None or call.session_key == session_key)
                and (not background or (call.sender is None and call.purpose in BACKGROUND))
            )

        sums = _Sums()
        filters = [f for f in (sender is not None, session_key is not None, background) if f]
        if len(filters) > 1:  # no counter holds a combination: add up the records
            for call in self._scan(since):
                if wanted(call):
                    sums.add_call(call)
            return sums.totals(None)
        if sender is not None:
            scope = f"sender={json.dumps(sender)}"
        elif session_key is not None:
            scope = f"session_key={json.dumps(session_key)}"
        else:
            scope = "background" if background else "all"
        fields = [f"{scope}|{metric}" for metric in METRICS]
        head, counters = self._read(since, lambda pipe, key: pipe.hmget(key, fields))
        for call in head:
            if wanted(call):
                sums.add_call(call)
        for values in counters:
            sums.add_counters(dict(zip(METRICS, values, strict=True)))
        return sums.totals(None)

    def grouped(self, by: str, since: float) -> list[Totals]:
        """Sums since `since` grouped by sender, chat, model or purpose, biggest spenders first."""
        column = GROUPS[by]
        groups: dict[str | None, _Sums] = {}
        head, counters = self._read(since, lambda pipe, key: pipe.hgetall(key))
        for call in head:
            groups.setdefault(getattr(call, column), _Sums()).add_call(call)
        prefix = f"{column}="
        for counter in counters:
            by_scope: dict[str, dict[str, str]] = {}
            for field, value in counter.items():
                scope, _, metric = field.rpartition("|")
                if scope.startswith(prefix):
                    by_scope.setdefault(scope, {})[metric] = value
            for scope, values in by_scope.items():
                groups.setdefault(json.loads(scope[len(prefix) :]), _Sums()).add_counters(values)
        totals = [sums.totals(key) for key, sums in groups.items()]
        return sorted(totals, key=lambda t: -t.tokens)

    def daily(self, since: float, offset_seconds: float) -> list[tuple[int, int]]:
        """(day number, tokens) since `since`; whole days are the ledger's local days, the first uses the offset."""
        days: dict[int, int] = {}
        first = self._first_whole_day(since)
        for call in self._scan(since, first.timestamp()):
            number = int((call.ts + offset_seconds) // 86400)
            days[number] = days.get(number, 0) + call.prompt_tokens + call.completion_tokens
        client = self._state.client
        days_read = client.zrangebyscore(self._key("days"), first.date().toordinal(), "+inf")
        ordinals = [int(day) for day in zset_members(days_read)]
        pipe = client.pipeline(transaction=False)
        for ordinal in ordinals:
            pipe.hmget(self._day_key(ordinal), "all|in", "all|out")
        for ordinal, (tokens_in, tokens_out) in zip(ordinals, pipe.execute() if ordinals else [], strict=True):
            number = ordinal - EPOCH_ORDINAL
            days[number] = days.get(number, 0) + int(float(tokens_in or 0)) + int(float(tokens_out or 0))
        return sorted(days.items())

    def calls(self, since: float = 0.0) -> list[CallRecord]:
        """Every call since `since`, oldest first (by time, then by arrival)."""
        return self._scan(since)

    def close(self) -> None:
        """Nothing to close: the connection belongs to the process's RedisState."""

    def _first_whole_day(self, since: float) -> datetime:
        """The local midnight at or after `since`: where day counters can take over from records."""
        start = day_start(since, self._zone)
        return start if start.timestamp() == since else next_day(since, self._zone)

    def _read(self, since: float, read: Callable[[Any, str], Any]) -> tuple[list[CallRecord], list[Any]]:
        """The records of a partial first day, and what `read` got from the counters covering the rest.

        After the partial day come whole days up to the end of their month (day counters), then whole
        months (month counters): a sum since a month start reads one hash per month, since a midnight
        one per day left in that month. Two round trips either way.
        """
        first = self._first_whole_day(since)
        day = first.date()
        following = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
        month = day if day.day == 1 else following
        last_day = day.toordinal() - 1 if day.day == 1 else following.toordinal() - 1
        client = self._state.client
        pipe = client.pipeline(transaction=False)
        pipe.zrangebyscore(self._key("days"), day.toordinal(), last_day)
        pipe.zrangebyscore(self._key("months"), month_number(month), "+inf")
        days, months = pipe.execute()
        head = self._scan(since, first.timestamp())
        pipe = client.pipeline(transaction=False)
        for ordinal in days:
            read(pipe, self._day_key(int(ordinal)))
        for number in months:
            read(pipe, self._state.key("usage", "month", number))
        return head, pipe.execute() if days or months else []

    def _scan(self, since: float, until: float | None = None) -> list[CallRecord]:
        """The records with `since <= ts < until`, oldest first."""
        if until is not None and until <= since:
            return []
        upper = "+inf" if until is None else f"({until!r}"
        members = zset_members(self._state.client.zrangebyscore(self._key("calls"), repr(since), upper))
        return [CallRecord(*json.loads(member.partition("|")[2])) for member in members]

    def _key(self, name: str) -> str:
        return self._state.key("usage", name)

    def _day_key(self, day: int) -> str:
        return self._state.key("usage", "day", str(day))
