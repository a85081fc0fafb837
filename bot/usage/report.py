"""`relaybot usage`: the ledger grouped into a table, a JSON array, or a per-day bar chart."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.config.durations import parse_duration
from bot.usage.ledger import Totals
from bot.usage.periods import month_start

CHART_WIDTH = 40


def since_timestamp(text: str | None, now: float, zone: ZoneInfo) -> float:
    """`--since`: a duration back from now (`7d`, `12h`), a date (`2026-11-01`), or the start of this month."""
    if not text:
        return month_start(now, zone).timestamp()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return now - parse_duration(text)
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


def as_json(groups: list[Totals]) -> str:
    """One JSON array, one object per group: key, calls, tokens_in, tokens_out, cost_usd (null = unknown)."""
    return json.dumps(
        [
            {
                "key": g.key,
                "calls": g.calls,
                "tokens_in": g.tokens_in,
                "tokens_out": g.tokens_out,
                "cost_usd": None if g.cost_usd is None else round(g.cost_usd, 6),
            }
            for g in groups
        ],
        indent=1,
    )


def as_table(groups: list[Totals], by: str) -> str:
    """A plain-text table with a total line; an unknown cost shows as `-`."""
    rows = [(g.key or "(background)", g.calls, g.tokens_in, g.tokens_out, g.cost_usd) for g in groups]
    known = [g.cost_usd for g in groups if g.cost_usd is not None]
    total = (
        "total",
        sum(r[1] for r in rows),
        sum(r[2] for r in rows),
        sum(r[3] for r in rows),
        sum(known) if known else None,
    )
    cells = [
        [str(r[0]), f"{r[1]:,}", f"{r[2]:,}", f"{r[3]:,}", "-" if r[4] is None else f"${r[4]:.4f}"]
        for r in [*rows, total]
    ]
    header = [by, "calls", "tokens in", "tokens out", "cost"]
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(c) for c in cells[:-1]), rule, line(cells[-1])])


def as_chart(days: list[tuple[int, int]]) -> str:
    """One bar per day (local day numbers since the epoch) scaled to the busiest day."""
    if not days:
        return "no usage in this period"
    peak = max(tokens for _, tokens in days) or 1
    epoch = date(1970, 1, 1)
    lines = []
    for number, tokens in days:
        bar = "#" * max(1 if tokens else 0, round(tokens / peak * CHART_WIDTH))
        lines.append(f"{epoch + timedelta(days=number):%Y-%m-%d}  {bar:<{CHART_WIDTH}}  {tokens:,}")
    return "\n".join(lines)
