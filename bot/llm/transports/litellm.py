"""The litellm transport's own rules: which key to send, and its exceptions read as failure evidence."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bot.config.schema import LLMConfig
from bot.llm.failures import (
    Evidence,
    Kind,
    answer_error_evidence,
    exception_chain,
    kind_without_status,
    request_address,
    retry_after,
    socket_failure,
)
from bot.llm.keys import call_key
from bot.llm.transports.litellm_loader import import_litellm


class RefusedTwice(Exception):
    """litellm answered None: the server refused the request with 422 twice (litellm retries once, dropping
    the parameters the refusal names, then gives up without raising)."""


def answered(answer: Any) -> Any:
    """litellm's answer, or `RefusedTwice` where it returned none."""
    if answer is None:
        raise RefusedTwice("the server refused the request (HTTP 422) twice; litellm returned no answer")
    return answer


def resolve_key(litellm: Any, config: LLMConfig) -> tuple[str | None, list[str]]:
    """The key to send (see `bot.llm.keys`; None lets litellm read the provider's variable), and the variables to
    name when a hosted provider has none (then the call fails at once)."""
    key = call_key(config.model, config.api_key.get_secret_value(), config.api_base)
    if key is not None:
        return key, []
    missing = litellm.validate_environment(config.model)["missing_keys"]
    return None, [name for name in missing if name.endswith("_API_KEY")]


def failure_evidence(exc: BaseException) -> Evidence:
    """What a failed litellm call (or the provider around it) tells the classifier, read from the exception chain."""
    import httpx

    chain = exception_chain(exc)
    reason = socket_failure(chain)
    if not reason and any(isinstance(error, httpx.ConnectError) for error in chain):
        reason = "cannot connect"
    if reason:
        # litellm's own exceptions carry made-up requests, so only the client's say where the call went.
        return Evidence(unreachable=reason, address=request_address(e for e in chain if not _from_litellm(e)))
    if any(isinstance(error, RefusedTwice) for error in chain):
        return Evidence(status=422)
    status = _http_status(chain)
    if status is None and (event := _error_event(chain)) is not None:
        return answer_error_evidence(event, mid_stream=True)
    if status is None:
        return Evidence(kind=_kind_by_class(exc, chain))
    overflow = isinstance(exc, import_litellm().ContextWindowExceededError)
    return Evidence(status=status, retry_after=retry_after(_response_headers(chain)), overflow=overflow)


def _error_event(chain: list[BaseException]) -> object | None:
    """The error object of an error event mid-stream: the OpenAI SDK raises its bare `APIError` carrying it."""
    import openai

    return next((e.body for e in chain if type(e) is openai.APIError and isinstance(e.body, Mapping)), None)


def _from_litellm(error: BaseException) -> bool:
    return type(error).__module__.startswith("litellm")


def _http_status(chain: list[BaseException]) -> int | None:
    """The status the provider really sent; litellm's own `status_code` is rewritten (500 for a refused connection)."""
    import httpx

    for error in chain:
        if isinstance(error, httpx.HTTPStatusError):
            return error.response.status_code
    for error in chain:
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and not _from_litellm(error):
            return status
    return None


def _kind_by_class(exc: BaseException, chain: list[BaseException]) -> Kind:
    """Without an HTTP status (timeouts, broken streams, client-side refusals), go by litellm's exception class."""
    if kind := kind_without_status(exc):
        return kind  # decided before importing litellm
    import openai

    litellm = import_litellm()
    if isinstance(exc, litellm.Timeout | litellm.APIConnectionError):
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


def _response_headers(chain: list[BaseException]) -> Iterator[Mapping[str, Any]]:
    for error in chain:
        headers = getattr(error, "litellm_response_headers", None)
        if headers:
            yield headers
        response = getattr(error, "response", None)
        if response is not None and getattr(response, "headers", None):
            yield response.headers
