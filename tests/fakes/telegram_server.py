"""A fake Telegram Bot API server (aiohttp on 127.0.0.1) that the real python-telegram-bot talks to."""

from __future__ import annotations

import asyncio
import contextlib
import html
import inspect
import itertools
import json
import random
import re
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from aiohttp import web

from tests.fakes import telegram_payloads as payloads
from tests.fakes.telegram_html import HtmlError, html_visible_text
from tests.fakes.waiting import RecordWaiter
from tests.support.polling import until

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
# Free-text fields arrive raw; JSON-decoding them would turn a message "42" into the int 42.
_STRING_FIELDS = frozenset(
    [
        "text",
        "caption",
        "parse_mode",
        "action",
        "emoji",
        "file_id",
        "callback_query_id",
        "inline_message_id",
        "url",
        "photo",
        "document",
        "voice",
        "audio",
        "video",
        "sticker",
        "business_connection_id",
        "message_effect_id",
    ]
)
_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    500: "Internal Server Error",
}
_BAD_GATEWAY = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
REACTION_EMOJI = frozenset(
    "👍👎❤🔥🥰👏😁🤔🤯😱🤬😢🎉🤩🤮💩🙏👌🕊🤡🥱🥴😍🐳🌚🌭💯🤣⚡🍌🏆💔🤨😐🍓🍾💋🖕😈😴😭🤓👻👀🎃🙈😇😨🤝🤗🫡🎅🎄☃💅🤪🗿🆒💘🙉🦄😘💊🙊😎👾🤷😡"
)
"""Telegram's fixed set of reaction emoji (single code points; a few real ones carry a variation selector)."""
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup"
    " are exactly the same as a current content and reply markup of the message"
)


class ApiError(Exception):
    """A Telegram error answer: {"ok": false, "error_code", "description", "parameters"}."""

    def __init__(
        self, status: int, description: str, retry_after: int | None = None, migrate_to_chat_id: int | None = None
    ) -> None:
        super().__init__(description)
        self.status, self.description = status, description
        self.retry_after, self.migrate_to_chat_id = retry_after, migrate_to_chat_id

    def response(self) -> web.Response:
        """The JSON answer real Telegram gives for this error."""
        body: dict[str, Any] = {"ok": False, "error_code": self.status, "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        if self.migrate_to_chat_id is not None:
            body["parameters"] = {"migrate_to_chat_id": self.migrate_to_chat_id}
        return web.json_response(body, status=self.status)


@dataclass(frozen=True)
class Upload:
    """A file part of a multipart request, as the bot uploaded it."""

    filename: str | None
    content_type: str
    content: bytes


class Sender(TypedDict, total=False):
    """Who sends an inbound message and where; defaults: a private chat 42 with user 42, "Ann" (@ann)."""

    chat_id: int
    user_id: int
    chat_type: str  # "private", "group" or "supergroup"
    message_id: int | None  # None numbers it after the last message seen
    first_name: str
    username: str | None
    reply_to_bot: bool  # reply to the bot's last message in the chat
    thread_id: int | None  # a forum topic: sets message_thread_id, is_topic_message and chat.is_forum
    entities: list[dict] | None  # None adds bot_command/mention entities like Telegram does
    reply_to: dict | None  # a message (as pushed or sent) this one replies to
    quote: str | None  # the part of `reply_to` the user picked to quote
    media_group_id: str | None  # an album this message is part of


@dataclass(frozen=True)
class _StoredFile:
    unique_id: str
    path: str
    content: bytes


def _chat_number(chat_id: Any) -> int | None:
    """A chat id as sent, JSON number or form string, as a number; None for a username or none at all."""
    try:
        return int(chat_id)
    except (TypeError, ValueError):
        return None


async def _decode_fields(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        return dict(await request.json())
    raw = {**request.query, **(await request.post())}
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(value, web.FileField):
            fields[name] = Upload(value.filename, value.content_type, value.file.read())
        elif name in _STRING_FIELDS:
            fields[name] = value
        else:
            try:
                fields[name] = json.loads(value)
            except ValueError:
                fields[name] = value
    return fields


class FakeTelegram:
    """An aiohttp Bot API server on 127.0.0.1: queue updates with `push`/`text`, read what the bot did."""

    def __init__(self, token: str = "123456:TEST-TOKEN", bot_id: int = 999, bot_username: str = "relay_bot") -> None:
        self.token, self.bot_id, self.bot_username = token, bot_id, bot_username
        self.calls: list[tuple[str, dict]] = []
        self.hosts: list[tuple[str, str]] = []
        self.sent: list[dict] = []
        self.drafts: list[dict] = []
        self.edits: list[dict] = []
        self.chat_actions: list[dict] = []
        self.commands: list[dict] = []  # the default scope's menu
        self.menus: dict[str, list[dict]] = {}  # each scope's menu, by scope type
        self.menu_updates: list[dict] = []  # every setMyCommands call
        self.answered: list[dict] = []  # answerCallbackQuery calls
        self.reactions: list[dict] = []  # setMessageReaction calls Telegram accepted
        self.markup_edits: list[dict] = []  # editMessageReplyMarkup calls
        self.privacy_mode = True  # getMe's can_read_all_group_messages is its opposite
        self._callback_ids = itertools.count(1)
        self._updates: deque[dict] = deque()
        self._update_ids = itertools.count(1)
        self._last_message_id = 0
        self._file_numbers = itertools.count(1)
        self._files: dict[str, _StoredFile] = {}
        self._chats: dict[Any, dict] = {}
        self._messages: dict[tuple[Any, int], dict] = {}
        self._sources: dict[tuple[Any, int], tuple] = {}  # what the bot sent, to spot no-op edits
        self._failures: dict[str, deque[ApiError]] = {}
        self._moved: dict[int, int] = {}  # group id -> the supergroup it became
        self.delivered: list[int] = []  # update ids handed out by getUpdates, redeliveries included
        self.faults: Counter[str] = Counter()  # chaos faults injected, by kind
        self._held: dict[str, asyncio.Event] = {}
        self._chaos: tuple[float, random.Random] | None = None
        self._dropped: set[tuple[str, Any]] = set()
        self._allowed_updates: set[str] = set()
        self._recorded = RecordWaiter()
        self._wakeup = asyncio.Event()
        self._down = False
        self._stopping = False
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._methods: dict[str, Callable[[dict], Any]] = {
            "getme": self._get_me,
            "deletewebhook": self._delete_webhook,
            "getwebhookinfo": self._webhook_info,
            "setmycommands": self._set_commands,
            "getmycommands": lambda f: self.menus.get(_scope_of(f), []),
            "deletemycommands": lambda f: self._set_commands({"scope": f.get("scope")}),
            "getupdates": self._get_updates,
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_message_text,
            "sendmessagedraft": self._send_message_draft,
            "sendchataction": self._send_chat_action,
            "getfile": self._get_file,
            "deletemessage": self._delete_message,
            "answercallbackquery": self._answer_callback_query,
            "setmessagereaction": self._set_message_reaction,
            "editmessagereplymarkup": self._edit_reply_markup,
            "sendphoto": lambda f: self._send_media("photo", f),
            "senddocument": lambda f: self._send_media("document", f),
            "sendvoice": lambda f: self._send_media("voice", f),
            "sendmediagroup": self._send_media_group,
        }

    @property
    def port(self) -> int:
        """The bound TCP port (valid after start)."""
        return self._port

    @property
    def base_url(self) -> str:
        """Pass to `ApplicationBuilder.base_url`; the library appends the token."""
        return f"http://127.0.0.1:{self._port}/bot"

    @property
    def base_file_url(self) -> str:
        """Pass to `ApplicationBuilder.base_file_url`."""
        return f"http://127.0.0.1:{self._port}/file/bot"

    @property
    def down(self) -> bool:
        """While True every request gets an HTML 502, as from a proxy whose upstream is gone."""
        return self._down

    @down.setter
    def down(self, value: bool) -> None:
        self._down = value
        self._poke()

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 (port 0 picks a free one); queued updates and records survive a restart."""
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._stopping = False
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Answer held getUpdates polls with [] and stop serving."""
        self._stopping = True
        self._poke()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # inbound: what users send

    def push(self, update: dict) -> dict:
        """Queue an update (numbering it if it has no update_id) and wake a held getUpdates."""
        update = dict(update)
        if "update_id" not in update:
            update["update_id"] = next(self._update_ids)
        else:
            self._update_ids = itertools.count(max(update["update_id"] + 1, next(self._update_ids)))
        for message in (update.get(kind) for kind in ("message", "edited_message", "channel_post")):
            if message:
                self._remember(message)
        self._updates.append(update)
        self._poke()
        return update

    def text(self, text: str, **sender: Unpack[Sender]) -> dict:
        """Push a text message from a user and return the update."""
        return self.push({"message": self._user_message({"text": text}, "entities", text, **sender)})

    def photo(self, content: bytes, *, caption: str = "", **sender: Unpack[Sender]) -> dict:
        """Push a photo (a thumbnail and the full size; only the last size holds `content`)."""
        thumb = payloads.photo_size(self._register("photos", b"\xff\xd8thumbnail", ".jpg"), 90, 68)
        sizes = [thumb, payloads.photo_size(self._register("photos", content, ".jpg"), 1280, 960)]
        return self.push({"message": self._user_message({"photo": sizes}, "caption_entities", caption, **sender)})

    def document(
        self, content: bytes, *, file_name: str, mime_type: str, caption: str = "", **sender: Unpack[Sender]
    ) -> dict:
        """Push a document message; its file can be downloaded."""
        document = payloads.document(self._register("documents", content, ""), file_name, mime_type)
        message = self._user_message({"document": document}, "caption_entities", caption, **sender)
        return self.push({"message": message})

    def voice(self, content: bytes, *, duration: int = 3, **sender: Unpack[Sender]) -> dict:
        """Push a voice note (audio/ogg); its file can be downloaded."""
        voice = payloads.voice(self._register("voice", content, ".oga"), duration)
        return self.push({"message": self._user_message({"voice": voice}, "caption_entities", "", **sender)})

    def album(self, contents: list[bytes], captions: list[str], **sender: Unpack[Sender]) -> list[dict]:
        """Push an album: one photo update per content, sharing a media_group_id; captions pair with contents."""
        group = sender.pop("media_group_id", None) or f"album-{next(self._file_numbers)}"
        captions = captions + [""] * (len(contents) - len(captions))
        return [
            self.photo(content, caption=caption, media_group_id=group, **sender)
            for content, caption in zip(contents, captions, strict=True)
        ]

    def edit(self, update: dict, text: str, *, edit_date: int | None = None) -> dict:
        """Push the user's edit of the message in `update`: an `edited_message` with the new text."""
        original = update.get("message") or update["edited_message"]
        key = "text" if "text" in original else "caption"
        entities_key = "entities" if key == "text" else "caption_entities"
        edited = {k: v for k, v in original.items() if k != entities_key}
        edited.update({key: text, "edit_date": edit_date or payloads.now() + len(self.calls)})
        if found := payloads.auto_entities(text):
            edited[entities_key] = found
        return self.push({"edited_message": edited})

    def press(self, message: dict, data: str, *, user_id: int = 42, first_name: str = "Ann") -> dict:
        """Push a callback_query: user `user_id` pressed the button with `data` under the bot's `message`."""
        query = {
            "id": f"cbq-{next(self._callback_ids)}",
            "from": payloads.user(user_id, first_name, None),
            "message": message,
            "chat_instance": "-42",
            "data": data,
        }
        return self.push({"callback_query": query})

    def message(self, chat_id: Any, message_id: int) -> dict | None:
        """A message as the fake holds it now (the bot's, with its current text and buttons, or a user's)."""
        return self._messages.get((chat_id, message_id))

    def add_file(self, file_id: str, content: bytes, file_path: str) -> None:
        """Make `file_id` resolvable by getFile and downloadable at `file_path`."""
        self._files[file_id] = _StoredFile(f"u-{file_id}", file_path, content)

    # outbound: what the bot did

    async def wait_for_sent(self, n: int, timeout: float = 10) -> list[dict]:
        """The first `n` sent messages, once that many exist."""

        def progress() -> str:
            return f"{len(self.sent)} of {n} sent: {self.sent}"

        await self._recorded.wait_until(lambda: len(self.sent) >= n, timeout, progress)
        return self.sent[:n]

    async def wait_for_delivered(self, update_id: int, timeout: float = 10) -> None:
        """Return once getUpdates has handed out update `update_id`."""
        await self._recorded.wait_until(
            lambda: update_id in self.delivered, timeout, lambda: f"updates delivered: {self.delivered}"
        )

    async def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 10) -> None:
        """Return once `check()` holds on the fake's records (checked after each call); TimeoutError names `what`."""
        await self._recorded.wait_until(check, timeout, lambda: f"{what} did not happen; sent: {self.sent}")

    async def wait_for_disconnects(self, timeout: float = 10) -> None:
        """Return once no client is connected: by then a killed client's last requests were answered or dropped."""
        assert self._runner is not None and self._runner.server is not None
        server = self._runner.server
        await until(lambda: not server.connections, timeout)

    async def wait_for_call(self, method: str, n: int = 1, timeout: float = 10) -> None:
        """Return once `method` has been called `n` times."""

        def count() -> int:
            return sum(1 for name, _ in self.calls if name.lower() == method.lower())

        await self._recorded.wait_until(lambda: count() >= n, timeout, lambda: f"{count()} of {n} {method} calls")

    def fail(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int | None = None,
        description: str | None = None,
        times: int = 1,
    ) -> None:
        """Make the next `times` calls of `method` fail with a Telegram error (429 carries retry_after)."""
        if status == 429 and retry_after is None:
            retry_after = 1
        if description is None:
            default = f"Too Many Requests: retry after {retry_after}" if status == 429 else _DESCRIPTIONS.get(status)
            description = default or "Internal Server Error"
        errors = self._failures.setdefault(method.lower(), deque())
        errors.extend(ApiError(status, description, retry_after) for _ in range(times))

    def migrate(self, group_id: int, supergroup_id: int, *, notice: bool = True) -> dict | None:
        """Upgrade a group to a supergroup as Telegram does: the old id refuses every call with migrate_to_chat_id;
        with `notice` the group also gets the service message saying where it went (returned; a bot that was down
        misses it)."""
        self._moved[group_id] = supergroup_id
        group = self._chats.get(group_id) or payloads.bare_chat(group_id)
        self._chats[supergroup_id] = {**group, "id": supergroup_id, "type": "supergroup"}
        if notice:
            number, user = self._next_message_id(), payloads.user(42, "Ann", "ann")
            moved = {"message_id": number, "from": user, "date": 0, "chat": group, "migrate_to_chat_id": supergroup_id}
            return self.push({"message": moved})
        return None

    def hold(self, method: str) -> None:
        """Keep calls of `method` waiting, unanswered and unprocessed, until `release`."""
        self._held.setdefault(method.lower(), asyncio.Event())

    def release(self, method: str) -> None:
        """Let held calls of `method` (and later ones) through."""
        if (event := self._held.pop(method.lower(), None)) is not None:
            event.set()

    def chaos(self, rate: float, seed: int = 0) -> None:
        """Fail `rate` of sendMessage calls at random: 429 (retry_after 1), 502, or a dropped connection
        before or after the message was delivered (the latter is what makes a resend a duplicate)."""
        self._chaos = (rate, random.Random(seed))

    # the wire

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _bad_gateway() if self._down else ApiError(401, "Unauthorized").response()
        method, fields = request.match_info["method"], await _decode_fields(request)
        self.calls.append((method, fields))  # even while down: tests want to see the bot's retries
        self.hosts.append((method, request.host))  # which base URL (127.0.0.1 or localhost) a client used
        await self._recorded.notify()
        if (held := self._held.get(method.lower())) is not None:
            await held.wait()  # a client killed meanwhile cancels this handler: nothing is processed
        if self._down:
            return _bad_gateway()
        fault = self._pick_fault(method.lower(), fields)
        if fault in ("429", "502", "drop-before"):
            self.faults[fault] += 1
            if fault == "429":
                return ApiError(429, "Too Many Requests: retry after 1", 1).response()
            if fault == "502":
                return _bad_gateway()
            return _dropped(request)
        try:
            result = await self._answer(method.lower(), fields)
        except ApiError as error:
            return error.response()
        finally:
            await self._recorded.notify()
        if fault == "drop-after":
            self.faults[fault] += 1
            return _dropped(request)
        return _bad_gateway() if self._down else web.json_response({"ok": True, "result": result})

    def _pick_fault(self, method: str, fields: dict) -> str | None:
        if self._chaos is None or method != "sendmessage":
            return None
        rate, rng = self._chaos
        if rng.random() >= rate:
            return None
        fault = rng.choice(["429", "502", "drop-before", "drop-after"])
        if fault.startswith("drop"):
            # A message is dropped at most once: a second drop may lose it by design (retried once only).
            key = (str(fields.get("chat_id")), fields.get("text"))
            if key in self._dropped:
                return "502"
            self._dropped.add(key)
        return fault

    async def _answer(self, method: str, fields: dict) -> Any:
        if self._failures.get(method):
            raise self._failures[method].popleft()
        if (moved := self._moved.get(_chat_number(fields.get("chat_id")))) is not None:
            raise ApiError(400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=moved)
        handler = self._methods.get(method)
        if handler is None:
            raise ApiError(404, "Not Found")
        result = handler(fields)
        return await result if inspect.isawaitable(result) else result

    async def _download(self, request: web.Request) -> web.Response:
        if self._down:
            return _bad_gateway()
        stored = next((f for f in self._files.values() if f.path == request.match_info["path"]), None)
        if request.match_info["token"] != self.token or stored is None:
            return ApiError(404, "Not Found").response()
        return web.Response(body=stored.content, content_type="application/octet-stream")

    # methods

    def _get_me(self, fields: dict) -> dict:
        return payloads.me(self.bot_id, self.bot_username, self.privacy_mode)

    def _delete_webhook(self, fields: dict) -> bool:
        if fields.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def _webhook_info(self, fields: dict) -> dict:
        return payloads.webhook_info(len(self._updates))

    def _set_commands(self, fields: dict) -> bool:
        commands = [{"command": c["command"], "description": c["description"]} for c in fields.get("commands") or []]
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command["command"]) or not 1 <= len(command["description"]) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        scope = _scope_of(fields)
        self.menus[scope] = commands
        if scope == "default":
            self.commands = commands
        self.menu_updates.append({"scope": scope, "commands": commands})
        return True

    def _answer_callback_query(self, fields: dict) -> bool:
        if not str(fields.get("callback_query_id") or "").startswith("cbq-"):
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        self.answered.append(fields)
        return True

    def _set_message_reaction(self, fields: dict) -> bool:
        key = (self._chat_of(fields)["id"], int(fields.get("message_id") or 0))
        if key not in self._messages:
            raise ApiError(400, "Bad Request: message to react not found")
        for reaction in fields.get("reaction") or []:
            if reaction.get("type") != "emoji" or reaction.get("emoji") not in REACTION_EMOJI:
                raise ApiError(400, "Bad Request: REACTION_INVALID")
        self.reactions.append(fields)
        return True

    def _edit_reply_markup(self, fields: dict) -> dict:
        key = (self._chat_of(fields)["id"], int(fields.get("message_id") or 0))
        message = self._messages.get(key)
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        text, mode, markup = self._sources.get(key, (None, None, None))
        if markup == fields.get("reply_markup"):
            raise ApiError(400, _NOT_MODIFIED)
        self._sources[key] = (text, mode, fields.get("reply_markup"))
        _set_markup(message, fields.get("reply_markup"))
        self.markup_edits.append(fields)
        return message

    async def _get_updates(self, fields: dict) -> list[dict]:
        offset = int(fields.get("offset") or 0)
        if offset < 0:
            while len(self._updates) > -offset:
                self._updates.popleft()
        while offset > 0 and self._updates and self._updates[0]["update_id"] < offset:
            self._updates.popleft()  # a higher offset confirms everything before it
        if isinstance(fields.get("allowed_updates"), list):
            self._allowed_updates = set(fields["allowed_updates"])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(fields.get("timeout") or 0)
        while not self._deliverable() and not (self._stopping or self._down) and loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), deadline - loop.time())
        updates = self._deliverable()[: int(fields.get("limit") or 100)]
        self.delivered.extend(update["update_id"] for update in updates)
        return updates

    def _deliverable(self) -> list[dict]:
        if self._allowed_updates:
            kept = [u for u in self._updates if self._allowed_updates & u.keys()]
            self._updates = deque(kept)  # Telegram never delivers the kinds the bot opted out of
        return list(self._updates)

    def _send_message(self, fields: dict) -> dict:
        chat = self._chat_of(fields)
        text = _visible(fields, "text", TEXT_LIMIT, "message text is empty", "message is too long")
        return self._record_sent(fields, self._bot_message(chat, fields, {"text": text}))

    def _send_media(self, kind: str, fields: dict) -> dict:
        chat = self._chat_of(fields)
        media = fields.get(kind)
        if media is None:
            raise ApiError(400, f"Bad Request: there is no {kind} in the request")
        if isinstance(media, Upload):
            stored = self._register(f"{kind}s", media.content, "")
        elif isinstance(media, str) and media in self._files:
            stored = self._file_info(media)
        elif isinstance(media, str) and media.startswith(("http://", "https://")):
            stored = self._register(f"{kind}s", b"", "")  # Telegram fetches URLs itself; the fake doesn't
        else:
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        extra: dict[str, Any] = {kind: [payloads.photo_size(stored, 1280, 960)] if kind == "photo" else stored}
        if isinstance(media, Upload) and kind == "document":
            extra[kind] = payloads.document(stored, media.filename, media.content_type)
        if kind == "voice":
            extra[kind] = payloads.voice(stored, int(fields.get("duration") or 1))
        if fields.get("caption"):
            extra["caption"] = _visible(fields, "caption", CAPTION_LIMIT, "", "message caption is too long")
        return self._record_sent(fields, self._bot_message(chat, fields, extra))

    def _send_media_group(self, fields: dict) -> list[dict]:
        """An album: 2-10 `media` items, photos/videos or documents alone, each `attach://<part>` or a file id."""
        items = fields.get("media")
        if not isinstance(items, list) or not 2 <= len(items) <= 10:
            raise ApiError(400, "Bad Request: wrong number of media items (2-10 are allowed)")
        kinds = {item.get("type") for item in items}
        if len(kinds) > 1 and not kinds <= {"photo", "video"}:
            raise ApiError(400, f"Bad Request: {sorted(kinds)[0]} can't be mixed with other media types")
        group, sent = str(self._next_message_id()), []
        for item in items:
            reference = str(item.get("media", ""))
            upload = fields.get(reference.removeprefix("attach://"))
            if not reference.startswith("attach://") or not isinstance(upload, Upload):
                raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
            single = {**fields, item["type"]: upload, "caption": item.get("caption"), "media_group_id": group}
            del single["media"]
            sent.append(self._send_media(item["type"], single))
        return sent

    def _edit_message_text(self, fields: dict) -> dict | bool:
        text = _visible(fields, "text", TEXT_LIMIT, "message text is empty", "message is too long")
        if fields.get("inline_message_id"):
            return True
        key = (self._chat_of(fields)["id"], int(fields.get("message_id") or 0))
        message = self._messages.get(key)
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if not _is_from(message, self.bot_id):
            raise ApiError(400, "Bad Request: message can't be edited")
        source = (fields.get("text"), fields.get("parse_mode"), fields.get("reply_markup"))
        if _shows(*self._sources.get(key, (None, None, None))) == _shows(*source):
            raise ApiError(400, _NOT_MODIFIED)
        self._sources[key] = source
        message.update(text=text, edit_date=payloads.now())
        _set_markup(message, fields.get("reply_markup"))
        self.edits.append(fields)
        return message

    def _send_message_draft(self, fields: dict) -> bool:
        chat = self._chat_of(fields)
        if chat.get("type") != "private":
            raise ApiError(400, "Bad Request: message drafts can be sent only to private chats")
        if not fields.get("draft_id"):
            raise ApiError(400, "Bad Request: draft_id must be non-zero")
        _visible(fields, "text", TEXT_LIMIT, "message text is empty", "message is too long")
        self.drafts.append(fields)
        return True

    def _delete_message(self, fields: dict) -> bool:
        key = (self._chat_of(fields)["id"], int(fields.get("message_id") or 0))
        if self._messages.pop(key, None) is None:
            raise ApiError(400, "Bad Request: message to delete not found")
        return True

    def _send_chat_action(self, fields: dict) -> bool:
        self._chat_of(fields)
        self.chat_actions.append(fields)
        return True

    def _get_file(self, fields: dict) -> dict:
        if fields.get("file_id") not in self._files:
            raise ApiError(400, "Bad Request: invalid file_id")
        return payloads.file(self._file_info(fields["file_id"]), self._files[fields["file_id"]].path)

    # message building

    def _user_message(
        self,
        content: dict,
        entities_key: str,
        text: str,
        *,
        chat_id: int = 42,
        user_id: int = 42,
        chat_type: str = "private",
        message_id: int | None = None,
        first_name: str = "Ann",
        username: str | None = "ann",
        reply_to_bot: bool = False,
        thread_id: int | None = None,
        entities: list[dict] | None = None,
        reply_to: dict | None = None,
        quote: str | None = None,
        media_group_id: str | None = None,
    ) -> dict:
        """A message from a user; `text` goes under "text" or "caption" beside its entities (see Sender)."""
        user = payloads.user(user_id, first_name, username)
        is_forum = thread_id is not None or self._chats.get(chat_id, {}).get("is_forum", False)
        chat = self._chats[chat_id] = payloads.chat(chat_id, chat_type, user, is_forum)
        number = self._next_message_id() if message_id is None else message_id
        message = payloads.user_message(number, chat, user, content, entities_key, text, entities, thread_id)
        if reply_to_bot:
            message["reply_to_message"] = self._last_bot_message(chat)
        if reply_to is not None:
            message["reply_to_message"] = payloads.as_replied(reply_to)
        if quote is not None:
            message["quote"] = {"text": quote, "position": 0, "is_manual": True}
        if media_group_id is not None:
            message["media_group_id"] = media_group_id
        return message

    def _bot_message(self, chat: dict, fields: dict, content: dict) -> dict:
        number = self._next_message_id()  # numbered before the reply check, which may fail
        replied = self._reply_target(chat, fields)
        message = payloads.bot_message(
            number, self._bot_user(), chat, content, fields.get("message_thread_id"), replied
        )
        _set_markup(message, fields.get("reply_markup"))
        return message

    def _reply_target(self, chat: dict, fields: dict) -> dict | None:
        target = fields.get("reply_parameters") or {}
        if not isinstance(target, dict):
            raise ApiError(400, "Bad Request: can't parse reply parameters JSON object")
        message_id = target.get("message_id", fields.get("reply_to_message_id"))
        if message_id is None:
            return None
        found = self._messages.get((target.get("chat_id", chat["id"]), int(message_id)))
        if found is None and not target.get("allow_sending_without_reply", fields.get("allow_sending_without_reply")):
            raise ApiError(400, "Bad Request: message to be replied not found")
        return None if found is None else payloads.as_replied(found)

    def _record_sent(self, fields: dict, message: dict) -> dict:
        self._remember(message)
        self._sources[(message["chat"]["id"], message["message_id"])] = (
            fields.get("text"),
            fields.get("parse_mode"),
            fields.get("reply_markup"),
        )
        self.sent.append({**fields, "message_id": message["message_id"]})
        return message

    def _last_bot_message(self, chat: dict) -> dict:
        ours = [m for (chat_id, _), m in self._messages.items() if chat_id == chat["id"] and _is_from(m, self.bot_id)]
        if ours:
            return payloads.as_replied(ours[-1])
        return payloads.earlier_bot_message(self._next_message_id(), self._bot_user(), chat)

    def _chat_of(self, fields: dict) -> dict:
        chat_id = fields.get("chat_id")
        if chat_id in (None, ""):
            raise ApiError(400, "Bad Request: chat_id is empty")
        return self._chats.get(chat_id) or payloads.bare_chat(chat_id)

    def _remember(self, message: dict) -> None:
        self._chats.setdefault(message["chat"]["id"], message["chat"])
        self._messages[(message["chat"]["id"], message["message_id"])] = message
        self._last_message_id = max(self._last_message_id, message["message_id"])

    def _next_message_id(self) -> int:
        self._last_message_id += 1
        return self._last_message_id

    def _bot_user(self) -> dict:
        return payloads.bot_user(self.bot_id, self.bot_username)

    def _register(self, folder: str, content: bytes, suffix: str) -> dict:
        number = next(self._file_numbers)
        self.add_file(f"{folder}-{number}", content, f"{folder}/file_{number}{suffix}")
        return self._file_info(f"{folder}-{number}")

    def _file_info(self, file_id: str) -> dict:
        stored = self._files[file_id]
        return payloads.file_info(file_id, stored.unique_id, len(stored.content))

    # waking waiters

    def _poke(self) -> None:
        """Wake every held getUpdates; each waits on the event current when it started."""
        self._wakeup.set()
        self._wakeup = asyncio.Event()


def _visible(fields: dict, name: str, limit: int, empty: str, too_long: str) -> str:
    """The visible text of a text or caption field, validated as Telegram does."""
    raw = fields.get(name)
    raw = "" if raw is None else str(raw)
    mode = str(fields.get("parse_mode") or "").lower()
    if mode not in ("", "html", "markdown", "markdownv2"):
        raise ApiError(400, "Bad Request: unsupported parse_mode")
    try:
        text = html_visible_text(raw) if mode == "html" else raw
    except HtmlError as error:
        raise ApiError(400, f"Bad Request: can't parse entities: {error}") from None
    if empty and not text.strip():
        raise ApiError(400, f"Bad Request: {empty}")
    if len(text) > limit:
        raise ApiError(400, f"Bad Request: {too_long}")
    return text


def _shows(text: str | None, parse_mode: str | None, markup: Any) -> tuple[str | None, Any]:
    """What a message looks like: plain text and the HTML that renders it alike are the same to Telegram."""
    if text is not None and str(parse_mode or "").lower() != "html":
        text = html.escape(text, quote=False)
    return text, markup or None


def _set_markup(message: dict, markup: Any) -> None:
    """Keep (or drop) a message's inline keyboard as Telegram returns it."""
    if markup:
        message["reply_markup"] = markup
    else:
        message.pop("reply_markup", None)


def _scope_of(fields: dict) -> str:
    """The BotCommandScope a menu call names: its type, with `:chat_id` for one chat's; "default" when none."""
    scope = fields.get("scope")
    if not isinstance(scope, dict):
        return "default"
    return f"{scope['type']}:{scope['chat_id']}" if "chat_id" in scope else str(scope.get("type"))


def _is_from(message: dict, user_id: int) -> bool:
    return (message.get("from") or {}).get("id") == user_id


def _dropped(request: web.Request) -> web.Response:
    """Close the connection without an answer, as a reset mid-request does."""
    if request.transport is not None:
        request.transport.abort()
    return web.Response(status=503)


def _bad_gateway() -> web.Response:
    return web.Response(status=502, text=_BAD_GATEWAY, content_type="text/html")
