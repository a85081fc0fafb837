import random

from channels.formatting import markdown_to_slack_mrkdwn, markdown_to_telegram_html, split_for_platform


def fences_balanced(chunk: str) -> bool:
    return sum(1 for line in chunk.split("\n") if line.strip().startswith("```")) % 2 == 0


def test_short_text_is_one_chunk() -> None:
    assert split_for_platform("hello", 4096) == ["hello"]


def test_splits_on_paragraphs_first() -> None:
    text = "\n\n".join(["a" * 60, "b" * 60, "c" * 60])
    assert split_for_platform(text, 130) == ["a" * 60 + "\n\n" + "b" * 60, "c" * 60]


def test_long_paragraph_splits_on_lines_then_sentences() -> None:
    lines = "\n".join(["line one is here", "line two is here", "line three is here"])
    assert split_for_platform(lines, 35) == ["line one is here\nline two is here", "line three is here"]
    sentences = "First sentence here. Second sentence here. Third one."
    assert split_for_platform(sentences, 45) == ["First sentence here. Second sentence here.", "Third one."]


def test_code_blocks_stay_whole_when_they_fit() -> None:
    code = "```python\n" + "\n".join(f"x = {i}" for i in range(10)) + "\n```"
    text = "intro " * 10 + "\n\n" + code + "\n\n" + "outro " * 10
    chunks = split_for_platform(text, len(code) + 5)
    assert code in chunks
    assert all(fences_balanced(c) for c in chunks)


def test_a_code_block_too_long_is_closed_and_reopened() -> None:
    code = "```python\n" + "\n".join(f"print({i})  # {'x' * 30}" for i in range(200)) + "\n```"
    chunks = split_for_platform("Here:\n\n" + code, 1000)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk) <= 1000
        assert fences_balanced(chunk)
    assert all(c.startswith("```python") for c in chunks[1:])


def test_nine_thousand_characters_become_three_telegram_messages() -> None:
    paragraph = ("word " * 80).strip()
    code = "```\n" + "\n".join("code line " + str(i) for i in range(60)) + "\n```"
    text = "\n\n".join([paragraph] * 10 + [code] + [paragraph] * 10)[:9000]
    chunks = split_for_platform(text, 4096)
    assert len(chunks) == 3
    assert all(len(c) <= 4096 and fences_balanced(c) for c in chunks)


def test_every_chunk_respects_the_limit_even_without_boundaries() -> None:
    chunks = split_for_platform("x" * 10000, 4096)
    assert [len(c) for c in chunks] == [4096, 4096, 1808]


def test_markdown_becomes_telegram_html() -> None:
    html = markdown_to_telegram_html("**bold** _it_ `code` [link](https://example.org) 1 < 2")
    assert "<b>bold</b>" in html and "<i>it</i>" in html and "<code>code</code>" in html
    assert '<a href="https://example.org">link</a>' in html and "1 &lt; 2" in html


def test_slack_mrkdwn_covers_the_common_markdown() -> None:
    assert markdown_to_slack_mrkdwn("**bold**, *italic* and ~~gone~~") == "*bold*, _italic_ and ~gone~"
    assert (
        markdown_to_slack_mrkdwn("see [the docs](https://example.com/a?b=1)")
        == "see <https://example.com/a?b=1|the docs>"
    )
    assert markdown_to_slack_mrkdwn("- one\n- two") == "•   one\n•   two"
    assert markdown_to_slack_mrkdwn("# Title") == "*Title*"


def test_slack_mrkdwn_leaves_code_alone_and_escapes_control_characters() -> None:
    assert markdown_to_slack_mrkdwn("call `__init__(**kw)` now") == "call `__init__(**kw)` now"
    assert markdown_to_slack_mrkdwn("```python\nx = **y**\n```") == "```\nx = **y**\n```"
    assert markdown_to_slack_mrkdwn("a <b> & c") == "a &lt;b&gt; &amp; c"


def test_plain_text_renders_exactly_as_the_converter_renders_it() -> None:
    from chatgpt_md_converter import telegram_format

    words = ["hello", "https://a.example/c?d=1&e=2", "a@b.example", "(see)", "[note]", "1.", "2)", "<b>", "&amp;"]
    words += ["é", "😀", "Q:", "3.14", "10:30", "'quote'", '"dq"', "{x}", "$5", "50%", "\n", "\n\n", "  ", "\t", "&"]
    words += ["2026-11-25", "a-b", "-", "--", "---", "+", "=", "==", "!", "wow!", "a+b", "c=d", "·"]
    rng = random.Random(7)
    for _ in range(2000):
        text = rng.choice([" ", "", "\n"]).join(rng.choice(words) for _ in range(rng.randint(1, 20)))
        assert markdown_to_telegram_html(text) == telegram_format(text), repr(text)
