"""What a failed model call means: sorted by the provider's real HTTP status, retried or turned into our error tree.

The classifier reads plain `Evidence`; each transport (`bot/llm/transports/`: litellm, openai_http) turns its own
exceptions into it, so this module imports no transport.
"""

from __future__ import annotations

import email.utils
import logging
import socket
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import (
    ContextOverflow,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderUnavailable,
    ProviderUnreachable,
    RequestRejected,
    StreamBroken,
)
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

MAX_RETRY_AFTER = 60.0
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
_OVERFLOW_STATUSES = frozenset({400, 422})

Kind = Literal["auth", "not_found", "overflow", "rejected", "unreachable", "transient", "unknown"]

# litellm's markers of a context-window error (exception_mapping_utils), lower-cased.
_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "exceed context limit",
    "this model's maximum context length is",
    "model's maximum context limit",
    "is longer than the model's context length",
    "input tokens exceed the configured limit",
    "exceeds the available context size",
    "exceeds the maximum number of tokens allowed",
    "prompt is too long",
)


class StreamCut(Exception):
    """The stream ended without a finish reason (no [DONE]) before any text was shown; worth another try."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a transport saw of a failed call, as plain data: the input of `classify`."""

    status: int | None = None  # the HTTP status the provider really sent
    retry_after: float | None = None  # seconds the provider asked us to wait
    overflow: bool = False  # the error says the request did not fit the context window
    unreachable: str = ""  # why no connection was made ("connection refused", "unknown host", …), else ""
    address: str | None = None  # where the failed request went
    kind: Kind = "unknown"  # the transport's verdict from the exception's class, used when no status came


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed call, classified: what kind, the real HTTP status if any, and what the provider asked of us."""

    kind: Kind
    status: int | None = None
    retry_after: float | None = None
    address: str | None = None
    reason: str = ""


def classify(evidence: Evidence) -> Failure:
    """Sort a failure by its cause: connection problems first, then the provider's own HTTP status, then the class."""
    if evidence.unreachable:
        return Failure("unreachable", address=evidence.address, reason=evidence.unreachable)
    status = evidence.status
    if status is None:
        return Failure(evidence.kind)
    if status in (401, 403):
        return Failure("auth", status)
    if status == 404:
        return Failure("not_found", status)
    if status in _TRANSIENT_STATUSES or status >= 500:
        return Failure("transient", status, evidence.retry_after)
    if status == 413 or (status in _OVERFLOW_STATUSES and evidence.overflow):
        return Failure("overflow", status)
    return Failure("rejected", status)


def says_overflow(message: str) -> bool:
    """Whether a provider's error message says the request did not fit the context window (litellm's markers)."""
    lowered = message.lower()
    return any(marker in lowered for marker in _OVERFLOW_MARKERS)


def answer_error_evidence(error: object, mid_stream: bool) -> Evidence:
    """What an error object inside a 200 answer says (the body's `error`, or an error event mid-stream).

    Read as litellm reads it, so both transports agree: a numeric `code` is the HTTP status; else a message
    naming the context window is an overflow; else an event mid-stream is a broken stream (worth another try),
    and a body is a 422 when it has no `code` at all, unknown when its code names no status.
    """
    fields = error if isinstance(error, Mapping) else {"message": error}
    overflow = says_overflow(str(fields.get("message") or ""))
    status = _status(fields.get("code"))
    if status is not None:
        return Evidence(status=status, overflow=overflow)
    if overflow:
        return Evidence(kind="overflow")
    if mid_stream:
        return Evidence(kind="transient")
    return Evidence(status=422) if "code" not in fields else Evidence(kind="unknown")


def _status(code: object) -> int | None:
    """An error code that is an HTTP status (429, "502"), else None."""
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    return code if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599 else None


def retry_delay(failure: Failure, attempt: int, policy: RetryPolicy) -> float | None:
    """Seconds before the next try, or None: one quick retry when unreachable, the full schedule when transient."""
    if failure.kind == "unreachable":
        return policy.delay(1) if attempt == 1 else None
    if failure.kind != "transient" or attempt >= policy.attempts:
        return None
    if failure.retry_after is not None:
        return min(failure.retry_after, MAX_RETRY_AFTER)
    return policy.delay(attempt)


def to_provider_error(
    failure: Failure, exc: BaseException, model: str, shown: bool, attempts: int = 1
) -> ProviderError:
    """Our error for a failure that will not be retried again, logging the detail the user never sees."""
    # litellm's own text for a refused connection only says "Connection error.": the root cause says more.
    detail = describe(exception_chain(exc)[-1] if failure.kind == "unreachable" else exc)
    if attempts > 1:
        detail = f"{detail} (after {attempts} attempts)"
    if shown:
        logger.warning(
            "llm stream from %s broke after part of the reply was shown (%s): %s", model, failure.kind, detail
        )
        return StreamBroken(detail)
    if failure.kind == "unreachable":
        logger.error("llm %s unreachable at %s (%s): %s", model, failure.address, failure.reason, detail)
        return ProviderUnreachable(failure.address or "its address", failure.reason)
    if failure.kind == "transient":
        logger.warning("llm %s not answering (HTTP %s): %s", model, failure.status or "-", detail)
        return ProviderUnavailable(detail)
    if failure.kind == "overflow":
        logger.warning("llm %s: context window exceeded: %s", model, detail)
        return ContextOverflow(detail)
    target: type[ProviderError] = {
        "auth": ProviderAuthError,
        "not_found": ModelNotFound,
        "rejected": RequestRejected,
    }.get(failure.kind, ProviderError)
    status = failure.status or "-"
    unexpected = failure.kind == "unknown"  # not a provider answer we know: keep the traceback
    logger.error("llm call to %s failed (%s, HTTP %s): %s", model, failure.kind, status, detail, exc_info=unexpected)
    return target(detail)


def describe(exc: BaseException) -> str:
    """A one-line description of an exception for the log, capped in length."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"


def exception_chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (or contexts), outermost first, each once."""
    return list(_chain(exc))


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def socket_failure(chain: Iterable[BaseException]) -> str:
    """Why the operating system made no connection ("connection refused", "unknown host"; the innermost wins)."""
    reason = ""
    for error in chain:
        if isinstance(error, ConnectionRefusedError):
            reason = "connection refused"
        elif isinstance(error, socket.gaierror) or _failed_lookup(error):
            reason = "unknown host"
    return reason


def _failed_lookup(error: BaseException) -> bool:
    """Whether aiohttp found no address for the host (with aiodns, its lookups raise no socket.gaierror)."""
    aiohttp = sys.modules.get("aiohttp")  # only a loaded aiohttp can have raised it
    return aiohttp is not None and isinstance(error, aiohttp.ClientConnectorDNSError)


def kind_without_status(exc: BaseException) -> Kind | None:
    """The kind of a failure any transport may see without an HTTP status (timeouts, broken streams), else None."""
    if isinstance(exc, StreamCut | TimeoutError | ConnectionError):
        return "transient"
    return None


def request_address(chain: Iterable[BaseException]) -> str | None:
    """Where the failed request went, from the first error carrying a `request.url` with a host."""
    for error in chain:
        try:
            url = getattr(getattr(error, "request", None), "url", None)
        except RuntimeError:  # httpx raises it when no request is attached
            continue
        if url is None or not url.host:
            continue
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{url.host}{port}"
    return None


def retry_after(headers: Iterable[Mapping[str, Any]]) -> float | None:
    """Seconds the provider asked us to wait (`retry-after-ms`, then `Retry-After` in seconds or as a date)."""
    for each in headers:
        if (ms := _number(each.get("retry-after-ms"))) is not None:
            return ms / 1000
        value = each.get("retry-after")
        if value is None:
            continue
        if (seconds := _number(value)) is not None:
            return seconds
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        return max(0.0, when.timestamp() - time.time())
    return None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None
