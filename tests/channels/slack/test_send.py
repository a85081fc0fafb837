from bot.bus import ChatRef, Choice, OutboundMessage
from channels.slack.buttons import choice_blocks
from tests.fakes.slack_server import FakeSlack
from tests.support.adapter import AdapterUnderTest

CHAT = ChatRef("slack", "C0GENERAL", "100.000001")
CHOICES = (Choice("once", "Allow once", "primary"), Choice("always", "Allow always"), Choice("deny", "Deny", "danger"))


def test_choices_become_one_actions_block_under_the_text() -> None:
    section, actions = choice_blocks("*Run* `ls`?", CHOICES, "K7Q")
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "*Run* `ls`?"}}
    assert actions["block_id"] == "relaybot:K7Q"
    assert [(b["action_id"], b["text"]["text"], b.get("style")) for b in actions["elements"]] == [
        ("once", "Allow once", "primary"),
        ("always", "Allow always", None),
        ("deny", "Deny", "danger"),
    ]


async def test_choices_are_rendered_as_buttons_and_a_press_comes_back(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "Run **ls**?", choices=CHOICES, prompt_id="K7Q"))
    (posted,) = slack.posted
    assert posted["thread_ts"] == CHAT.thread_id and posted["text"] == "Run *ls*?"
    assert posted["blocks"][1]["elements"][2]["text"]["text"] == "Deny"
    slack.press(posted, "Allow always", user="U0OWNER")
    pressed = await adapter.next()
    assert pressed.press.prompt_id == "K7Q" and pressed.press.choice_id == "always"
    assert pressed.press.prompt_message_id == f"C0GENERAL:{posted['ts']}" and pressed.chat == CHAT
    assert (pressed.text, pressed.sender_id, pressed.sender_name) == ("Allow always", "U0OWNER", "Olive")
    await slack.wait_for_acks(2)  # the bot's own post echoed back, and the press
    (envelope,) = slack.envelopes_of("interactive")
    assert envelope.acked and envelope.ack_delay < 3.0


async def test_a_long_text_goes_first_and_the_buttons_after_it(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    text = "\n\n".join(["A paragraph of the plan, long enough to matter. " * 10] * 8)
    await adapter.channel.send(OutboundMessage(CHAT, text, choices=CHOICES, prompt_id="P1"))
    assert len(slack.posted) == 2 and "blocks" not in slack.posted[0]
    assert slack.posted[1]["text"] == "Allow once / Allow always / Deny"
    assert slack.posted[1]["blocks"][0]["block_id"] == "relaybot:P1"


async def test_edit_of_replaces_the_prompt_in_place_without_its_buttons(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "Run ls?", choices=CHOICES, prompt_id="K7Q"))
    prompt = f"C0GENERAL:{slack.posted[0]['ts']}"
    await adapter.channel.send(OutboundMessage(CHAT, "Run ls? **Allowed once** by Olive", edit_of=prompt))
    (update,) = slack.updates
    assert (update["ts"], update["text"], update["blocks"]) == (
        slack.posted[0]["ts"],
        "Run ls? *Allowed once* by Olive",
        [],
    )
    assert len(slack.posted) == 1


async def test_a_prompt_closed_without_a_press_is_updated_in_place_without_its_buttons(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "Run ls?", choices=CHOICES, prompt_id="K7Q"))
    await adapter.channel.send(OutboundMessage(CHAT, "Run ls?\nTimed out, not run.", prompt_id="K7Q"))
    (update,) = slack.updates
    assert (update["ts"], update["text"], update["blocks"]) == (
        slack.posted[0]["ts"],
        "Run ls?\nTimed out, not run.",
        [],
    )
    assert len(slack.posted) == 1


async def test_closing_a_prompt_the_adapter_does_not_know_sends_the_text_anew(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "Timed out, not run.", prompt_id="ZZZ"))
    assert slack.updates == [] and [p["text"] for p in slack.posted] == ["Timed out, not run."]


async def test_an_edit_slack_refuses_is_sent_anew(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "decided", edit_of="C0GENERAL:999.000001"))
    assert slack.updates == [] and [p["text"] for p in slack.posted] == ["decided"]


async def test_a_revised_answer_replaces_the_earlier_reply(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    question = "C0GENERAL:100.000005"
    await adapter.channel.send(OutboundMessage(CHAT, "first answer", reply_to_platform_id=question))
    await adapter.channel.send(OutboundMessage(CHAT, "second answer", revises_reply_to=question))
    assert [u["text"] for u in slack.updates] == ["second answer"] and len(slack.posted) == 1
    await adapter.channel.send(OutboundMessage(CHAT, "unknown one", revises_reply_to="C0GENERAL:1.000001"))
    assert len(slack.posted) == 2 and len(slack.updates) == 1


async def test_a_private_notice_is_ephemeral(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    await adapter.channel.send(OutboundMessage(CHAT, "Not yours to decide.", kind="notice", private_to="U0STRANGER"))
    assert slack.posted == []
    (notice,) = slack.ephemeral
    assert (notice["user"], notice["channel"], notice["thread_ts"]) == ("U0STRANGER", "C0GENERAL", CHAT.thread_id)


async def test_a_refused_private_notice_is_posted(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    slack.fail("chat.postEphemeral", status=200, error="user_not_in_channel")
    await adapter.channel.send(OutboundMessage(CHAT, "Not yours.", kind="notice", private_to="U0STRANGER"))
    assert [p["text"] for p in slack.posted] == ["Not yours."]
