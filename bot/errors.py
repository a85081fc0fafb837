"""The one error tree of relaybot.

BotError
├── ConfigError            bad or missing configuration; `key` names the key path
├── ProviderError          the LLM call failed; `user_message` is safe to show in a chat
│   ├── ProviderAuthError      the API key was refused
│   │   └── MissingApiKey          no key is set for a hosted provider; `env_vars` name where to set one
│   ├── ModelNotFound          the model name is unknown to the provider (HTTP 404)
│   ├── RequestRejected        the provider refused the request itself (other 4xx); retrying cannot help
│   ├── ContextOverflow        the request did not fit the model's context window
│   │   ├── MessageTooLarge        the user's message alone does not fit
│   │   └── PromptTooLarge         relaybot's own system prompt and tools do not fit: the owner must act
│   ├── ProviderUnavailable    transient failures outlasted the retries (429, 5xx, timeouts)
│   │   ├── ProviderUnreachable    connection refused or unknown host; `address` is where we tried
│   │   └── StreamBroken           the stream failed after part of the reply was shown
│   └── BudgetExceeded         a spending limit was reached; the model was not called
├── TurnTimedOut           a turn ran past agent.turn_timeout and was cancelled; `seconds` is the limit
├── ToolError              a tool could not do what was asked; the registry reports it to the model
│   ├── ToolUnavailable        it failed on something passing (network, timeout, 5xx); a read-only call is retried once
│   └── UnreadableDocument     a document cannot be read (damaged, locked, too large, a zip bomb); one line why
├── GatewayUnreachable     the running gateway did not answer on its control socket in time
├── BackupError            a backup archive is damaged or cannot be restored here; `path` names the archive
├── BusClosed              the bus takes no new inbound messages (a stop is under way)
└── ChannelError           a platform call failed for good (bad request, forbidden)
    ├── ChannelUnavailable     a transient failure worth retrying (5xx, connection reset, timeout)
    │   ├── RateLimited            the platform asked us to wait `retry_after` seconds (`whole_bot` for a global limit)
    │   └── DeliveryAmbiguous      the connection dropped after the request was written; retried once
    ├── MarkupRejected         the platform could not parse our formatting; resend as plain text
    └── WindowClosed           the platform takes only pre-approved templates in this chat now (WhatsApp's 24 h)
"""

from __future__ import annotations


class BotError(Exception):
    """Root of every error relaybot raises on purpose."""


class ConfigError(BotError):
    """Configuration is missing or invalid; `key` is the dotted key path, if known."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key


class ProviderError(BotError):
    """An LLM call failed; `user_message` is the fixed text a chat user may see."""

    user_message = "Sorry, I couldn't get an answer from my language model. Please try again in a moment."


class ProviderAuthError(ProviderError):
    """The provider refused the API key."""

    user_message = (
        "Sorry, I can't reach my language model: the API key was refused. "
        "The owner needs to check llm.api_key in the config."
    )


class MissingApiKey(ProviderAuthError):
    """A hosted provider needs a key and none is configured; `env_vars` are the variables that would hold one."""

    def __init__(self, env_vars: list[str]) -> None:
        self.env_vars = env_vars
        names = " or ".join(env_vars)
        super().__init__(f"no API key: set {names} or llm.api_key")
        self.user_message = (
            f"Sorry, I can't reach my language model: no API key is set. "
            f"The owner needs to set {names} in the environment (or llm.api_key in the config)."
        )


class ModelNotFound(ProviderError):
    """The provider does not know the configured model."""

    user_message = (
        "Sorry, my language model is not available: the provider does not know the configured "
        "model. The owner needs to check llm.model in the config."
    )


class RequestRejected(ProviderError):
    """The provider refused the request as malformed or not allowed; the same request would fail again."""

    user_message = (
        "Sorry, my language model refused this request. The owner can find the reason in the log "
        "(check llm.model and llm.api_base in the config)."
    )


class ContextOverflow(ProviderError):
    """The request was larger than the model's context window."""

    user_message = "Sorry, this conversation has grown too long for my model. Send /new to start a fresh one."


class MessageTooLarge(ContextOverflow):
    """The current message alone overflows the context window, so a fresh conversation would not help."""

    user_message = (
        "Sorry, your message is too large for my model's context window. "
        "Please send a shorter message, or split it into parts."
    )


class PromptTooLarge(ContextOverflow):
    """The system prompt and tool definitions alone fill the model's window: no message can fit, whoever sends it."""

    user_message = (
        "Sorry, I'm misconfigured: my language model's context window is too small for my own instructions "
        "and tools, so I can't answer anything. The owner has been told (the details are in the log)."
    )


class ProviderUnavailable(ProviderError):
    """Transient provider failures persisted through every retry."""

    user_message = "Sorry, my language model is not answering right now. Please try again in a moment."


class ProviderUnreachable(ProviderUnavailable):
    """No connection could be made (refused, unknown host); `address` is where we tried."""

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"{address}: {reason}")
        self.address = address
        self.reason = reason
        self.user_message = (
            f"Sorry, I can't reach my language model at {address} ({reason}). "
            "The owner needs to check that the server is running and llm.api_base is right."
        )


class StreamBroken(ProviderUnavailable):
    """The model's stream failed after part of the reply had been shown."""

    user_message = (
        "Sorry, my reply broke off: the connection to my language model failed midway, "
        "so the text above is incomplete. Please ask again."
    )


class TurnTimedOut(BotError):
    """A turn ran past `agent.turn_timeout` and was cancelled."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"turn ran past its {seconds:g}s limit")
        self.seconds = seconds


class BudgetExceeded(ProviderError):
    """A sender's (or background work's) budget is used up for the period; `user_message` says when it resets."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class ToolError(BotError):
    """A tool failed in a way the model should hear about and can recover from."""


class ToolUnavailable(ToolError):
    """A tool failed on something passing (network, timeout, 5xx): a read-only call is tried once more."""


def http_failure(status: int, text: str) -> ToolError:
    """The tool error for a failed HTTP answer: passing for a 5xx, for good otherwise."""
    return ToolUnavailable(text) if status >= 500 else ToolError(text)


class SearchThrottled(ToolError):
    """A search provider answered 429 (or is still backing off from one); `retry_after` in seconds."""

    def __init__(self, provider: str, retry_after: float) -> None:
        super().__init__(f"{provider} search is rate limited; try again in about {retry_after:.0f}s.")
        self.provider = provider
        self.retry_after = retry_after


class UnreadableDocument(ToolError):
    """A document that cannot be read safely or at all; the message is one line the model can pass on."""


class GatewayUnreachable(BotError):
    """The gateway's control socket exists but did not answer in time."""


class BackupError(BotError):
    """A backup archive is damaged, unsafe or cannot be restored where asked; `path` is the archive."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class ChannelError(BotError):
    """A chat platform call failed; `code` is the platform's own error code when it gave one (Slack's
    `already_reacted`, Discord's JSON code), so callers compare codes, never an error's text."""

    def __init__(self, message: str = "", code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class ChannelUnavailable(ChannelError):
    """A transient platform failure; the call may succeed if retried."""


class MarkupRejected(ChannelError):
    """The platform refused the message's markup."""


class WindowClosed(ChannelError):
    """The chat is outside the platform's reply window: only a pre-approved template may be sent."""


class NothingToChange(ChannelError):
    """The platform refused an edit that would leave the message as it is: what the edit wanted is already so."""


class ChatMoved(ChannelError):
    """The platform moved the chat to a new id (a Telegram group became a supergroup); sends go there from now on."""

    def __init__(self, new_chat_id: str) -> None:
        super().__init__(f"the chat moved to {new_chat_id}")
        self.new_chat_id = new_chat_id


class RateLimited(ChannelUnavailable):
    """The platform asked us to wait before retrying."""

    def __init__(self, retry_after: float, message: str = "rate limited", whole_bot: bool = False) -> None:
        super().__init__(f"{message} (retry after {retry_after}s)")
        self.retry_after = retry_after
        self.whole_bot = whole_bot


class BusClosed(BotError):
    """The bus takes no new inbound messages (the gateway is stopping); the platform was not acknowledged."""


class DeliveryAmbiguous(ChannelUnavailable):
    """The connection dropped after the request was written: the platform may have the message already."""
