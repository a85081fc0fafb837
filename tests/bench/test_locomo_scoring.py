"""A question scored: what the model was shown and recall's result, against plain BM25 on the same history."""

from locomo.conversation import parse
from locomo.model import Seen
from locomo.scoring import prompt_text, recalled_block, score

from tests.bench.test_locomo_conversation import DATA

BLOCK = "[From earlier conversations (this chat's memory; may be out of date)]\nAnn: a kite\n[end of recalled passages]"


def test_the_prompt_is_every_message_and_earlier_tool_calls() -> None:
    messages = [
        {"role": "system", "content": "You are relaybot."},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "recall", "arguments": '{"q": 1}'}}]},
        {"role": "user", "content": [{"type": "text", "text": f"{BLOCK}\n\nWhen? [q7-2]"}]},
    ]
    assert prompt_text(messages) == f'You are relaybot.\n\n{{"q": 1}}\n{BLOCK}\n\nWhen? [q7-2]'
    assert recalled_block(messages) == BLOCK
    assert recalled_block(messages[:2]) == ""


def test_each_question_is_scored_against_what_it_saw_and_bm25_over_the_history_before_it() -> None:
    conversation = parse("7", DATA)
    found = (
        "Best matches in this chat's memory for 'When?':\n"
        "1. 2026-12-06 (Sun), Ann: Look at this. [shares a photo of a red kite]\n"
        "2. 2026-12-06 (Sun), Ann: What did Ann buy? [q7-1]\n  you replied: a kite"
    )
    prompt = [{"role": "system", "content": "Bo: Flying it today?"}, {"role": "user", "content": "When? [q7-2]"}]
    first, second = score(conversation, {"q7-2": Seen(prompt, found)})
    assert (first.tool, first.prompt, first.answered) == (0.0, 0.0, False)  # never shown to the model
    assert (second.tool, second.prompt, second.prompt_tool) == (0.5, 0.5, 1.0)  # "Look at this." / "Flying it today?"
    assert (second.passages, second.restated, second.tool_chars) == (2, 1, len(found))
    assert second.bm25 == 0.0  # "when" is a stop word: plain BM25 finds nothing
