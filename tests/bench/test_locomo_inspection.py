"""One question laid open: each evidence line marked covered or not by recall's result and by the prompt."""

from locomo.conversation import parse
from locomo.inspection import described
from locomo.model import Seen

from tests.bench.test_locomo_conversation import DATA


def test_each_evidence_line_is_marked_for_the_tool_and_the_prompt() -> None:
    conversation = parse("7", DATA)
    question = conversation.questions[1]
    seen = Seen([{"role": "user", "content": "Bo: Flying it today?"}], "1. Ann: Look at this.")
    assert described(conversation, question, seen) == [
        "q7-2 (2): When?  answer: 2023",
        "  evidence D1:2 [tool + prompt -] Ann: Look at this.",
        "  evidence D2:3 [tool - prompt +] Bo: Flying it today?",
        "  auto-recalled block:\n(none)",
        "  recall's result:\n1. Ann: Look at this.",
    ]
