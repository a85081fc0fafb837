"""One question laid open for tuning: its evidence lines, which of them recall's result and the prompt cover, and
the result itself."""

from __future__ import annotations

from locomo.conversation import Conversation, Question
from locomo.coverage import Covering
from locomo.model import Seen
from locomo.scoring import prompt_text, recalled_block


def described(conversation: Conversation, question: Question, seen: Seen) -> list[str]:
    """The lines that show what the model held for `question`, and what it lacked."""
    tool, prompt = Covering(seen.found), Covering(prompt_text(seen.prompt))
    lines = [f"{question.tag} ({question.category}): {question.text}  answer: {question.answer}"]
    for dia_id in question.evidence:
        line = conversation.lines[dia_id]
        marks = f"tool {'+' if tool.covers(line.text) else '-'} prompt {'+' if prompt.covers(line.text) else '-'}"
        lines.append(f"  evidence {dia_id} [{marks}] {line.speaker}: {line.text}")
    lines.append(f"  auto-recalled block:\n{recalled_block(seen.prompt) or '(none)'}")
    lines.append(f"  recall's result:\n{seen.found or '(none)'}")
    return lines
