"""A LoCoMo conversation read as the bench plays it: exchanges, questions and event summaries."""

from locomo.conversation import GREETING, NO_REPLY, parse

DATA = {
    "speaker_a": "Ann",
    "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Hey Bo!"},
        {"speaker": "Ann", "dia_id": "D1:2", "text": "Look at this.", "blip_caption": "a photo of a red kite"},
        {"speaker": "Bo", "dia_id": "D1:3", "text": "Lovely kite."},
        {"speaker": "Ann", "dia_id": "D1:4", "text": "Bye!"},
    ],
    "session_2_date_time": "9:00 am on 9 May, 2023",
    "session_2": [
        {"speaker": "Bo", "dia_id": "D2:1", "text": "Morning!"},
        {"speaker": "Ann", "dia_id": "D2:2", "text": "Hi Bo."},
        {"speaker": "Bo", "dia_id": "D2:3", "text": "Flying it today?"},
    ],
    "session_3_date_time": "no lines were kept for this one",
    "events_session_1": {"Ann": ["Ann buys a kite."], "Bo": ["Bo likes kites."], "date": "8 May, 2023"},
    "events_session_2": {"Ann": [], "Bo": [], "date": "9 May, 2023"},
    "qa": [
        {"question": "What did Ann buy?", "answer": "a kite", "evidence": ["D1:2"], "category": 4},
        {"question": "When?", "answer": 2023, "evidence": ["D1:2; D2:3"], "category": 2},
        {"question": "Would Bo fly?", "answer": "yes", "evidence": [], "category": 3},
        {"question": "What did Bo buy?", "evidence": ["D1:3"], "category": 5, "adversarial_answer": "a kite"},
    ],
}


def test_consecutive_lines_of_a_speaker_are_one_message_with_photos_as_captions() -> None:
    first = parse("7", DATA).exchanges[0]
    assert first.asked == "Hey Bo!\nLook at this. [shares a photo of a red kite]"
    assert first.answered == "Lovely kite."
    assert first.dia_ids == ("D1:1", "D1:2", "D1:3")


def test_a_session_the_bot_opens_starts_with_a_greeting_and_one_the_user_ends_gets_a_short_reply() -> None:
    exchanges = parse("7", DATA).exchanges
    assert [(e.session, e.asked, e.answered) for e in exchanges] == [
        (1, "Hey Bo!\nLook at this. [shares a photo of a red kite]", "Lovely kite."),
        (1, "Bye!", NO_REPLY),
        (2, GREETING, "Morning!"),
        (2, "Hi Bo.", "Flying it today?"),
    ]


def test_questions_with_evidence_in_categories_one_to_four_are_asked_tagged() -> None:
    questions = parse("7", DATA).questions
    assert [(q.asked, q.category, q.evidence, q.answer) for q in questions] == [
        ("What did Ann buy? [q7-1]", 4, ("D1:2",), "a kite"),
        ("When? [q7-2]", 2, ("D1:2", "D2:3"), "2023"),
    ]


def test_event_summaries_are_dated_and_sessions_without_events_have_none() -> None:
    conversation = parse("7", DATA)
    assert conversation.events == {1: "8 May, 2023: Ann buys a kite. Bo likes kites."}
    assert conversation.lines["D1:2"].text == "Look at this."
