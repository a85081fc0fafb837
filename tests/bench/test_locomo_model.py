"""The LoCoMo bench's fake model: the other speaker's lines, LoCoMo's events as summaries, a recall per question."""

from dataclasses import replace

from locomo.conversation import parse
from locomo.model import QUIET, LocomoModel

from bot.memory.files import SAVE_MEMORY_TOOL
from tests.bench.test_locomo_conversation import DATA
from tests.fakes.openai_server import Text, ToolCalls


def consolidation(excerpt: str) -> dict:
    return {"messages": [{"role": "user", "content": excerpt}], "tools": [SAVE_MEMORY_TOOL]}


def test_an_exchange_is_answered_with_the_other_speakers_lines() -> None:
    model = LocomoModel(parse("7", DATA))
    exchange = model.now = parse("7", DATA).exchanges[0]
    body = {"messages": [{"role": "user", "content": f"[telegram DM 42 · from Ann]\n{exchange.asked}"}]}
    assert model(body) == Text("Lovely kite.")


def test_an_exchange_is_known_by_its_text_without_the_outer_whitespace_the_gateway_strips() -> None:
    model = LocomoModel(parse("7", DATA))
    exchange = parse("7", DATA).exchanges[0]
    model.now = replace(exchange, asked=f" {exchange.asked} ")
    body = {"messages": [{"role": "user", "content": f"[telegram DM 42 · from Ann]\n{exchange.asked}"}]}
    assert model(body) == Text("Lovely kite.")


def test_consolidation_saves_the_events_of_the_sessions_in_the_excerpt() -> None:
    model = LocomoModel(parse("7", DATA))
    excerpt = "USER: Hey Bo!\nLook at this. [shares a photo of a red kite]\nASSISTANT: Lovely kite."
    entry = "8 May, 2023: Ann buys a kite. Bo likes kites."
    assert model(consolidation(excerpt)) == ToolCalls((("save_memory", {"history_entry": entry, "memory_update": ""}),))
    quiet = {"history_entry": QUIET, "memory_update": ""}
    assert model(consolidation("USER: When? [q7-2]\nASSISTANT: 2023")) == ToolCalls((("save_memory", quiet),))


def test_a_question_is_shown_then_recalled_and_both_are_noted() -> None:
    model = LocomoModel(parse("7", DATA))
    question = model.now = parse("7", DATA).questions[0]
    prompt = [{"role": "system", "content": "You are relaybot."}, {"role": "user", "content": question.asked}]
    assert model({"messages": prompt}) == ToolCalls((("recall", {"query": "What did Ann buy?"}),))
    result = {"role": "tool", "tool_call_id": "1", "content": "1. Ann: Look at this."}
    assert model({"messages": [*prompt, {"role": "assistant", "content": ""}, result]}) == Text("a kite")
    assert model.seen["q7-1"].prompt == prompt
    assert model.seen["q7-1"].found == "1. Ann: Look at this."
