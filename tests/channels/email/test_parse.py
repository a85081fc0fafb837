"""Reading mail, pure: senders, threads, trimmed text, HTML, loops, subjects."""

from email.message import EmailMessage

import pytest

from channels.email.parse import (
    automated_reason,
    html_to_text,
    parse_mail,
    read_mail,
    reply_subject,
    thread_key,
    trim_reply,
)

BOT = "bot@relay.test"


def mail(text: str = "hi", **headers: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = headers.pop("From", "Ann Example <Ann@Example.org>")
    message["Message-ID"] = headers.pop("Message_ID", "<m2@example.org>")
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return read_mail(message.as_bytes())


def test_sender_is_the_lower_case_address_with_its_display_name() -> None:
    parsed = parse_mail(mail())
    assert parsed is not None
    assert (parsed.sender, parsed.sender_name, parsed.message_id) == (
        "ann@example.org",
        "Ann Example",
        "<m2@example.org>",
    )


def test_the_thread_is_the_first_reference_else_in_reply_to_else_the_mail_itself() -> None:
    alone = parse_mail(mail())
    answered = parse_mail(mail(In_Reply_To="<m1@x>"))
    chained = parse_mail(mail(In_Reply_To="<m1b@x>", References="<m0@x> <m1b@x>"))
    assert alone and answered and chained
    assert (alone.thread, answered.thread, chained.thread) == ("<m2@example.org>", "<m1@x>", "<m0@x>")
    assert chained.references == ("<m0@x>", "<m1b@x>", "<m2@example.org>")
    assert thread_key("<m0@x>") == thread_key("<m0@x>") and len(thread_key("<m0@x>")) == 16


def test_mail_without_sender_or_message_id_is_not_read() -> None:
    assert parse_mail(mail(From="")) is None
    assert parse_mail(mail(Message_ID="")) is None


def test_quotes_and_signature_are_trimmed() -> None:
    text = "Yes, Friday.\n\nOn Mon, 1 Jan 2026, Bot <bot@relay.test> wrote:\n> Is Friday fine?\n> More"
    assert trim_reply(text) == "Yes, Friday."
    assert trim_reply("Sure\n> quoted\nthanks\n-- \nAnn\nCEO") == "Sure\nthanks"
    assert trim_reply("Ja.\n\nAm Montag schrieb Bot:\n> Frage") == "Ja."


def test_html_is_read_as_visible_text_without_quotes_scripts_and_styles() -> None:
    source = (
        "<html><head><title>t</title><style>b{}</style></head><body><div>Line <b>one</b></div>"
        "<p>Line&nbsp;two &amp; more</p><blockquote>earlier mail</blockquote><script>x</script></body></html>"
    )
    assert html_to_text(source) == "Line one\n\nLine two & more"


def test_html_only_mail_body_is_its_text() -> None:
    message = EmailMessage()
    message["From"], message["Message-ID"] = "a@b.c", "<h@b.c>"
    message.set_content("<p>Only <i>HTML</i></p>", subtype="html")
    parsed = parse_mail(read_mail(message.as_bytes()))
    assert parsed is not None and parsed.text == "Only HTML"


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Auto_Submitted": "auto-replied"}, "Auto-Submitted"),
        ({"Precedence": "bulk"}, "Precedence"),
        ({"List_Id": "<l.example.org>"}, "a mailing list"),
        ({"X_Auto_Response_Suppress": "OOF"}, "X-Auto-Response-Suppress"),
        ({"Return_Path": "<>"}, "an empty Return-Path (a bounce)"),
        ({"From": "MAILER-DAEMON@example.org"}, "an automated sender (mailer-daemon@example.org)"),
        ({"From": "Bot <BOT@relay.test>"}, "our own address"),
    ],
)
def test_mail_loops_are_recognised(headers: dict[str, str], reason: str) -> None:
    assert automated_reason(mail(**headers), BOT) == reason


def test_a_person_and_auto_submitted_no_are_answered() -> None:
    assert automated_reason(mail(Auto_Submitted="no"), BOT) is None


def test_delivery_reports_are_recognised() -> None:
    report = EmailMessage()
    report["From"] = "someone@example.org"
    report.set_content("failed")
    report.make_mixed()
    report.replace_header("Content-Type", 'multipart/report; report-type="delivery-status"; boundary="b"')
    assert automated_reason(read_mail(report.as_bytes()), BOT) == "a delivery report"


@pytest.mark.parametrize(
    ("subject", "expected"),
    [("Plans", "Re: Plans"), ("RE: re: Fwd: Plans", "Re: Plans"), ("AW: Plans", "Re: Plans"), ("", "Re: (no subject)")],
)
def test_reply_subject_has_exactly_one_re(subject: str, expected: str) -> None:
    assert reply_subject(subject) == expected
