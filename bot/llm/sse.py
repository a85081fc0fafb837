"""Server-sent events: the data of each event, from bytes however they arrive and however long a line is."""

from __future__ import annotations

_DATA = b"data: "
_BETWEEN = b"\n\ndata: "


class EventReader:
    """Takes the body piece by piece and gives back the data of every event each piece completes."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []  # the start of a line whose end has not arrived
        self._data: list[bytes] = []  # the data lines of the event being read

    def feed(self, piece: bytes) -> list[bytes]:
        """The data of the events this piece ends (a line may span pieces; it is joined once, when it ends)."""
        if not self._partial and not self._data and (plain := _plain_events(piece)) is not None:
            return plain
        events: list[bytes] = []
        if self._partial:
            end = piece.find(b"\n")
            if end < 0:
                self._partial.append(piece)
                return events
            self._partial.append(piece[:end])
            line = b"".join(self._partial)
            self._partial.clear()
            self._read((line,), events)
            piece = piece[end + 1 :]
        *lines, rest = piece.split(b"\n")
        self._read(lines, events)
        if rest:
            self._partial.append(rest)
        return events

    def end(self) -> list[bytes]:
        """The body ended: the last event, when it came without its blank line."""
        events: list[bytes] = []
        if self._partial:
            self._read((b"".join(self._partial),), events)
            self._partial.clear()
        if self._data:
            events.append(b"\n".join(self._data))
            self._data.clear()
        return events

    def _read(self, lines: tuple[bytes, ...] | list[bytes], events: list[bytes]) -> None:
        """Take whole lines into the event being read; a blank line ends it (comments and other fields are skipped)."""
        data = self._data
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            elif not line and data:
                events.append(b"\n".join(data))
                data.clear()


def _plain_events(piece: bytes) -> list[bytes] | None:
    """The data of a piece made of whole one-line `data: ` events, each ended by a blank line with `\\n` (most reads
    of a stream), split in one go; None for any other piece.

    Its newlines are then exactly those of the separators and of the final blank line, two per event.
    """
    if not piece.startswith(_DATA) or not piece.endswith(b"\n\n") or b"\r" in piece:
        return None
    events = piece[len(_DATA) : -2].split(_BETWEEN)
    return events if piece.count(b"\n") == 2 * len(events) else None
