"""Server-sent events: whole one-line events are split in one go, and every other piece reads the same line by line."""

import pytest

from bot.llm.sse import EventReader

BODIES = [
    b'data: {"a": 1}\n\ndata: {"b": 2}\n\ndata: [DONE]\n\n',
    b"data: no space\n\ndata:\n\ndata: \n\n",
    b'data: {"a": 1}\r\n\r\ndata: [DONE]\r\n\r\n',
    b": keep-alive\n\nevent: delta\ndata: one\ndata: two\n\ndata: three\n\n",
    b"data: one\n\n\n\ndata: two\n\n",
    b"data: x\nid: 7\n\ndata: y\n\n",
]


def read_whole(body: bytes) -> list[bytes]:
    reader = EventReader()
    return reader.feed(body) + reader.end()


def read_in_pieces(body: bytes, *cuts: int) -> list[bytes]:
    reader = EventReader()
    bounds = [0, *cuts, len(body)]
    events = [event for start, end in zip(bounds, bounds[1:], strict=False) for event in reader.feed(body[start:end])]
    return events + reader.end()


def read_byte_by_byte(body: bytes) -> list[bytes]:
    return read_in_pieces(body, *range(1, len(body)))


@pytest.mark.parametrize("body", BODIES)
def test_a_body_read_whole_gives_the_events_it_gives_byte_by_byte(body: bytes) -> None:
    assert read_whole(body) == read_byte_by_byte(body)


@pytest.mark.parametrize("body", BODIES)
def test_a_body_cut_anywhere_into_two_reads_gives_the_same_events(body: bytes) -> None:
    whole = read_whole(body)
    assert all(read_in_pieces(body, cut) == whole for cut in range(1, len(body)))


def test_plain_events_are_their_data_lines_without_the_field_name() -> None:
    assert read_whole(BODIES[0]) == [b'{"a": 1}', b'{"b": 2}', b"[DONE]"]
    assert read_whole(BODIES[1]) == [b"no space", b"", b""]


def test_a_read_that_ends_mid_event_keeps_its_start_for_the_next() -> None:
    reader = EventReader()
    assert reader.feed(b'data: {"a": 1}\n\ndata: {"b"') == [b'{"a": 1}']
    assert reader.feed(b": 2}\n") == []
    assert reader.feed(b"\ndata: [DONE]\n\n") == [b'{"b": 2}', b"[DONE]"]


def test_data_spanning_lines_is_not_split_into_events() -> None:
    assert read_whole(b"data: one\ndata: two\n\ndata: three\n\n") == [b"one\ntwo", b"three"]


def test_events_are_read_however_the_bytes_arrive() -> None:
    assert read_in_pieces(b'data: {"a": 1}\r\n\r\ndata: [DONE]\n\n', 9) == [b'{"a": 1}', b"[DONE]"]
    assert read_whole(b": comment\nevent: x\ndata: one\ndata: two\n\n") == [b"one\ntwo"]
    assert read_whole(b"data: last, without its blank line") == [b"last, without its blank line"]


def test_a_megabyte_line_in_small_pieces_is_one_event() -> None:
    line = b"data: " + b"x" * 1_000_000 + b"\n\n"
    assert read_in_pieces(line, *range(65_536, len(line), 65_536)) == [b"x" * 1_000_000]
