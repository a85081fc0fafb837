"""What a failed model call means: sorted by the provider's real HTTP status, retried or turned into our error tree."""

from __future__ import annotations

import email.utils
import logging
import socket
import time
from collections.abc import Iterator
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


class StreamCut(Exception):
    """The stream ended without a finish reason (no [DONE]) before any text was shown; worth another try."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed call, classified: what kind, the real HTTP status if any, and what the provider asked of us."""

    kind: Kind
    status: int | None = None
    retry_after: float | None = None
    address: str | None = None
    reason: str = ""


def classify(exc: BaseException) -> Failure:
    """Sort a failure by its cause: connection problems first, then the provider's own HTTP status, then the class."""
    chain = list(_chain(exc))
    if unreachable := _unreachable(chain):
        return unreachable
    status = _http_status(chain)
    if status is None:
        return Failure(_kind_by_class(exc, chain))
    if status in (401, 403):
        return Failure("auth", status)
    if status == 404:
        return Failure("not_found", status)
    if status in _TRANSIENT_STATUSES or status >= 500:
        return Failure("transient", status, retry_after(exc))
    if status == 413 or (status in _OVERFLOW_STATUSES and _is_overflow(exc)):
        return Failure("overflow", status)
    return Failure("rejected", status)


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
    detail = describe(list(_chain(exc))[-1] if failure.kind == "unreachable" else exc)
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


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (`retry-after-ms`, then `Retry-After` in seconds or as a date)."""
    for headers in _response_headers(exc):
        if (ms := _number(headers.get("retry-after-ms"))) is not None:
            return ms / 1000
        value = headers.get("retry-after")
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


def describe(exc: BaseException) -> str:
    """A one-line description of an exception for the log, capped in length."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _unreachable(chain: list[BaseException]) -> Failure | None:
    """A refused connection or unknown host, naming the address from the failed request."""
    import httpx

    reason = ""
    for error in chain:
        if isinstance(error, ConnectionRefusedError):
            reason = "connection refused"
        elif isinstance(error, socket.gaierror):
            reason = "unknown host"
        elif isinstance(error, httpx.ConnectError) and not reason:
            reason = "cannot connect"
    if not reason:
        return None
    return Failure("unreachable", address=_address(chain), reason=reason)


def _address(chain: list[BaseException]) -> str | None:
    """Where the failed request went; litellm's own exceptions carry made-up requests, so only the client's count."""
    for error in chain:
        if type(error).__module__.startswith("litellm"):
            continue
        try:
            url = error.request.url  # type: ignore[attr-defined]
        except (AttributeError, RuntimeError):  # httpx raises RuntimeError when no request is attached
            continue
        if not url.host:
            continue
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{url.host}{port}"
    return None


def _http_status(chain: list[BaseException]) -> int | None:
    """The status the provider really sent; litellm's own `status_code` is rewritten (500 for a refused connection)."""
    import httpx

    for error in chain:
        if isinstance(error, httpx.HTTPStatusError):
            return error.response.status_code
    for error in chain:
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and not type(error).__module__.startswith("litellm"):
            return status
    return None


def _kind_by_class(exc: BaseException, chain: list[BaseException]) -> Kind:
    """Without an HTTP status (other transports, timeouts, broken streams), go by litellm's exception class."""
    if isinstance(exc, StreamCut | TimeoutError | ConnectionError):
        return "transient"  # decided before importing litellm, which the fast path never loads
    import openai

    from bot.llm import import_litellm

    litellm = import_litellm()
    if isinstance(exc, StreamCut | TimeoutError | litellm.Timeout | litellm.APIConnectionError):
        return "transient"
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return "auth"
    if isinstance(exc, litellm.NotFoundError):
        return "not_found"
    if isinstance(exc, litellm.ContextWindowExceededError):
        return "overflow"
    if isinstance(exc, litellm.BadRequestError | litellm.UnprocessableEntityError):
        return "rejected"
    if any(type(error) is openai.OpenAIError for error in chain):
        return "rejected"  # the client refused before sending anything (a missing setting): retrying cannot help
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.RateLimitError) or (isinstance(status, int) and status >= 500):
        return "transient"
    return "unknown"


def _is_overflow(exc: BaseException) -> bool:
    from bot.llm import import_litellm
    from bot.llm.openai_http import HTTPFailure

    if isinstance(exc, HTTPFailure):
        return exc.overflow

    return isinstance(exc, import_litellm().ContextWindowExceededError)


def _response_headers(exc: BaseException) -> Iterator[Any]:
    for error in _chain(exc):
        headers = getattr(error, "litellm_response_headers", None)
        if headers:
            yield headers
        response = getattr(error, "response", None)
        if response is not None and getattr(response, "headers", None):
            yield response.headers


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None
