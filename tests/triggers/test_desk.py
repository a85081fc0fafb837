"""The desk: each answer of POST /hooks/<name>, and the system message a new delivery becomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.bus import InboundMessage, Trust
from bot.config.schema_triggers import TriggerConfig
from bot.errors import BusClosed
from bot.triggers.deliveries import DeliveryBook
from bot.triggers.desk import HookRequest, TriggerDesk, TriggerRun
from bot.triggers.verification import signature

SECRET = "s3cret"
PR = {"action": "opened", "pull_request": {"title": "Fix it"}, "sender": {"login": "alice"}}


class Bus:
    """Publishes into a list; a message id seen before is refused, as the journal does."""

    def __init__(self) -> None:
        self.published: list[InboundMessage] = []

    async def publish(self, message: InboundMessage) -> bool:
        if any(seen.id == message.id for seen in self.published):
            return False
        self.published.append(message)
        return True


def trigger(**overrides: Any) -> TriggerConfig:
    data = {
        "name": "github",
        "secret": SECRET,
        "header": "X-Hub-Signature-256",
        "events": ["pull_request"],
        "chat": "telegram:5",
        "prompt": "PR {payload.action}: {payload.pull_request.title} by {payload.sender.login}",
        "rate": "2/minute",
    }
    return TriggerConfig.model_validate({**data, **overrides})


def request(body: bytes, event: str = "pull_request", delivery: str | None = "d-1", **headers: str) -> HookRequest:
    sent = {"x-hub-signature-256": signature(SECRET, body), "x-github-event": event, **headers}
    if delivery is not None:
        sent["x-github-delivery"] = delivery
    return HookRequest("github", sent, body, "127.0.0.1")


@pytest.fixture
def bus() -> Bus:
    return Bus()


@pytest.fixture
def book(tmp_path: Path) -> DeliveryBook:
    return DeliveryBook(tmp_path / "triggers.db")


async def test_a_new_delivery_becomes_a_guest_system_message_and_a_202(bus: Bus, book: DeliveryBook) -> None:
    desk = TriggerDesk([trigger()], book, bus.publish)
    seen: list[TriggerRun] = []
    desk.watch(seen.append)
    answer = await desk.receive(request(json.dumps(PR).encode()))
    assert answer.status == 202 and set(answer.body) == {"runId", "acceptedAt"}
    [message] = bus.published
    assert message.id == answer.body["runId"] and seen == [TriggerRun(message.id, "github", "trigger:github")]
    assert message.trust is Trust.GUEST and message.kind == "system" and message.origin == "trigger"
    assert message.charge_to == "trigger:github" and message.chat.session_key == "trigger:github"
    assert "PR opened: Fix it by alice" in message.text and "<<untrusted webhook payload" in message.text


async def test_the_same_delivery_twice_runs_once_with_the_first_run_id(bus: Bus, book: DeliveryBook) -> None:
    desk = TriggerDesk([trigger()], book, bus.publish)
    first = await desk.receive(request(b"{}"))
    again = await desk.receive(request(b'{"changed": true}'))
    assert again.status == 200 and again.body["runId"] == first.body["runId"] and again.body["duplicate"]
    assert len(bus.published) == 1


async def test_a_delivery_the_journal_has_but_the_book_lost_is_still_once(bus: Bus, tmp_path: Path) -> None:
    """A crash between the journal write and the book's: the journal refuses the run id again."""
    desk = TriggerDesk([trigger()], DeliveryBook(tmp_path / "a.db"), bus.publish)
    first = await desk.receive(request(b"{}"))
    fresh = TriggerDesk([trigger()], DeliveryBook(tmp_path / "b.db"), bus.publish)
    again = await fresh.receive(request(b"{}"))
    assert again.status == 200 and again.body["runId"] == first.body["runId"] and len(bus.published) == 1


async def test_refusals(bus: Bus, book: DeliveryBook, caplog: pytest.LogCaptureFixture) -> None:
    desk = TriggerDesk([trigger(max_bytes=100)], book, bus.publish)
    assert (await desk.receive(HookRequest("nope", {}, b"{}"))).status == 404
    assert (await desk.receive(request(b"x" * 101))).status == 413
    forged = request(b"{}", **{"x-hub-signature-256": signature("guess", b"{}")})
    assert (await desk.receive(forged)).status == 401
    assert "trigger github: bad or missing signature from 127.0.0.1" in caplog.text
    not_json = await desk.receive(request(b"not json"))
    assert not_json.status == 400 and "not JSON" in not_json.body["error"]
    assert bus.published == [] and book.last("github") is None


async def test_ping_and_other_events_are_answered_and_start_nothing(bus: Bus, book: DeliveryBook) -> None:
    desk = TriggerDesk([trigger()], book, bus.publish)
    ping = await desk.receive(request(b'{"zen": "Keep it logically awesome."}', event="ping", delivery="p-1"))
    assert ping.status == 200 and ping.body["ping"] == "pong"
    issues = await desk.receive(request(b"{}", event="issues", delivery="i-1"))
    assert issues.status == 200 and "ignored" in issues.body
    assert bus.published == []
    last = book.last("github")
    assert last is not None and last.outcome == "ignored"


async def test_the_rate_limit_answers_429_with_retry_after(bus: Bus, book: DeliveryBook) -> None:
    now = [0.0]
    desk = TriggerDesk([trigger()], book, bus.publish, clock=lambda: now[0])
    for n in range(2):
        assert (await desk.receive(request(b"{}", delivery=f"d-{n}"))).status == 202
    now[0] = 15.0
    limited = await desk.receive(request(b"{}", delivery="d-2"))
    assert limited.status == 429 and limited.headers == {"Retry-After": "45"}
    assert (await desk.receive(request(b"{}", delivery="d-0"))).status == 200  # a known delivery is no new work
    now[0] = 60.0
    assert (await desk.receive(request(b"{}", delivery="d-2"))).status == 202


async def test_without_a_delivery_id_each_request_is_its_own_run(bus: Bus, book: DeliveryBook) -> None:
    desk = TriggerDesk([trigger(events=[], prompt="{event}")], book, bus.publish)
    first = await desk.receive(request(b"plain text", delivery=None))
    second = await desk.receive(request(b"plain text", delivery=None))
    assert first.status == second.status == 202 and first.body["runId"] != second.body["runId"]
    assert "plain text" in bus.published[0].text


async def test_a_stopping_bot_answers_503_and_remembers_nothing(book: DeliveryBook) -> None:
    async def closed(message: InboundMessage) -> bool:
        raise BusClosed("the bot is stopping; the message was not accepted")

    answer = await TriggerDesk([trigger()], book, closed).receive(request(b"{}"))
    assert answer.status == 503 and "Retry-After" in answer.headers and book.known("github", "d-1") is None


async def test_a_shared_session_runs_in_the_target_chat_at_the_configured_trust(bus: Bus, book: DeliveryBook) -> None:
    desk = TriggerDesk([trigger(session="shared", trust="user")], book, bus.publish)
    await desk.receive(request(b"{}"))
    [message] = bus.published
    assert message.chat.session_key == "telegram:5" and message.trust is Trust.USER
