"""The LoCoMo bench end to end: a conversation played through the real gateway (Telegram fake, litellm, the fake
model), long enough to be consolidated, then a question whose evidence only memory still holds."""

import gc
from pathlib import Path

from locomo.conversation import parse
from locomo.playback import play
from locomo.scoring import score


def chat(sessions: int, exchanges: int) -> dict:
    """A conversation of numbered small talk; its first line names the kite a question asks about."""
    data: dict = {"speaker_a": "Ann", "speaker_b": "Bo", "qa": []}
    for s in range(1, sessions + 1):
        lines = []
        for n in range(exchanges):
            lines.append({"speaker": "Ann", "dia_id": f"D{s}:{2 * n + 1}", "text": f"Small talk {s}-{n} about tea."})
            lines.append({"speaker": "Bo", "dia_id": f"D{s}:{2 * n + 2}", "text": f"Reply {s}-{n} about biscuits."})
        data[f"session_{s}"] = lines
        data[f"events_session_{s}"] = {"Ann": [f"Ann chats, part {s}."], "Bo": [], "date": f"{s} May, 2023"}
    data["session_1"][0]["text"] = "My kite is called Zephyr and it is bright red with long ribbons."
    data["qa"] = [{"question": "What is my kite called?", "answer": "Zephyr", "evidence": ["D1:1"], "category": 4}]
    return data


async def test_a_played_conversation_is_consolidated_and_its_question_recalled(tmp_path: Path) -> None:
    conversation = parse("9", chat(2, 35))  # 140 messages: past the memory window of 100
    try:
        played = await play(conversation, tmp_path)
    finally:
        gc.unfreeze()  # play freezes the heap as `relaybot run` does; this test worker keeps collecting as before
    (history,) = (tmp_path / "workspace" / "memory").rglob("HISTORY.md")
    assert "1 May, 2023: Ann chats, part 1." in history.read_text()
    seen = played.seen["q9-1"]
    assert seen.prompt[-1]["content"].endswith("What is my kite called? [q9-1]")
    assert "Zephyr" in seen.found and len(played.recall_cpu) == 1
    (scored,) = score(conversation, played.seen)
    assert (scored.tool, scored.bm25, scored.answered) == (1.0, 1.0, True)
