"""The vectors of a scope's passages, stored beside its search index and searched exactly, by brute force.

They live in the index's own SQLite file (table `passage_vectors`, one float32 BLOB per passage id), so the
index's passages and their vectors go together: a rebuilt index starts without vectors, and a passage the
index drops loses its vector (a trigger deletes it in the same transaction). sqlite-vec would need
`enable_load_extension`, which many Pythons' sqlite3 lack; numpy over an in-memory copy of the vectors is
exact, and fast enough (docs/performance.md). Safe across threads: a lock serialises each store's calls.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.storage.sqlite import open_store

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EMBED_CHARS = 4000  # of one passage, embedded: enough for its meaning, within every model's input limit
# A passage the index deletes (MEMORY.md's facts are replaced whole; a reindex clears everything) takes its
# vector along in the same transaction, whichever process deletes it, and counts as a drop.
_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS passage_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL UNIQUE, ts REAL NOT NULL, crc INTEGER NOT NULL,
    model TEXT NOT NULL, vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS passage_vector_drops (n INTEGER NOT NULL);
INSERT INTO passage_vector_drops SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM passage_vector_drops);
CREATE TRIGGER IF NOT EXISTS passage_vectors_follow AFTER DELETE ON passages BEGIN
    DELETE FROM passage_vectors WHERE id = OLD.id;
    UPDATE passage_vector_drops SET n = n + 1;
END;
COMMIT;
"""
_COLUMNS = "p.id, p.ts, p.kind, p.asked, p.answered"


def passage_text(kind: str, asked: str, answered: str) -> str:
    """What is embedded for a passage: the message and its reply (a fact after its heading), cut to EMBED_CHARS."""
    text = f"{asked}\n{answered}".strip() if kind != "fact" else f"{answered}: {asked}".lstrip(": ")
    return text[:EMBED_CHARS]


def text_crc(text: str) -> int:
    """The checksum a vector keeps of the text it was made from."""
    return zlib.crc32(text.encode())


@dataclass(frozen=True, slots=True)
class Pending:
    """A passage that needs a (new) vector, and the text to embed."""

    id: int
    ts: float
    text: str


def unit_rows(vectors: Sequence[Sequence[float]]) -> list[bytes]:
    """Each vector normalised to length 1, as float32 bytes (a zero vector stays zero)."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms == 0, 1, norms)
    return [row.tobytes() for row in matrix]


class VectorCopy:
    """A scope's vectors in memory (id, time, unit float32 row), searched exactly by brute force; a search reads one
    snapshot, so it may run while another thread changes the copy."""

    def __init__(self) -> None:
        self._rows: tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float32]] | None = None

    def add(self, ids: Sequence[int], ts: Sequence[float], vectors: Sequence[bytes]) -> None:
        """Add rows in the order stored, replacing older ones of the same ids; rows of another width than the last
        (another model's) are left out, and a new width replaces the whole copy."""
        import numpy as np

        width = len(vectors[-1]) // 4
        rows = [
            (rowid, at, vector) for rowid, at, vector in zip(ids, ts, vectors, strict=True) if len(vector) == width * 4
        ]
        new_ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        new_ts = np.fromiter((row[1] for row in rows), dtype=np.float64, count=len(rows))
        matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), width)
        if self._rows is None or self._rows[2].shape[1] != width:
            self._rows = new_ids, new_ts, matrix
            return
        old_ids, old_ts, old_matrix = self._rows
        kept = ~np.isin(old_ids, new_ids)
        self._rows = (
            np.concatenate([old_ids[kept], new_ids]),
            np.concatenate([old_ts[kept], new_ts]),
            np.concatenate([old_matrix[kept], matrix]),
        )

    def keep(self, ids: Sequence[int]) -> None:
        """Keep only the rows of these ids."""
        import numpy as np

        if self._rows is None:
            return
        old_ids, old_ts, old_matrix = self._rows
        kept = np.isin(old_ids, np.fromiter(ids, dtype=np.int64, count=len(ids)))
        self._rows = old_ids[kept], old_ts[kept], old_matrix[kept]

    def nearest(
        self, query: Sequence[float], limit: int, since: float | None, until: float | None, floor: float = -1.0
    ) -> list[int]:
        """The ids of the `limit` rows closest to `query` (cosine, at least `floor`) in [since, until), best first."""
        import numpy as np

        if self._rows is None or not len(self._rows[0]):
            return []
        ids, ts, matrix = self._rows
        vector = np.asarray(query, dtype=np.float32)
        if vector.shape != (matrix.shape[1],):
            return []  # another model's vectors (the config changed): nothing to compare with yet
        scores = matrix @ (vector / (np.linalg.norm(vector) or 1.0))
        if since is not None:
            scores = np.where(ts >= since, scores, -np.inf)
        if until is not None:
            scores = np.where(ts < until, scores, -np.inf)
        count = min(limit, int((scores >= floor).sum()))
        if count <= 0:
            return []
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [int(rowid) for rowid in ids[best]]


class PassageVectors:
    """One index file's vectors for one model: which passages need one, storing them, and the nearest to a query."""

    def __init__(self, path: Path, model: str) -> None:
        self.path = path
        self._model = model
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._inode = 0
        self._checked = 0  # every passage up to this id has a vector, though maybe of an older text (see _changed)
        self._drops: int | None = None  # passages the index had dropped when last looked at
        self._copy = VectorCopy()
        self._loaded = 0  # the highest `seq` in the copy

    def pending(self, limit: int) -> list[Pending]:
        """Up to `limit` passages without a vector of their current text, oldest first; forgets dropped passages."""
        with self._lock:
            db = self._connection()
            if db is None:
                return []
            rows = self._changed(db)
            rows += db.execute(
                f"SELECT {_COLUMNS} FROM passages p WHERE p.id > ? AND NOT EXISTS "
                "(SELECT 1 FROM passage_vectors v WHERE v.id = p.id) ORDER BY p.id LIMIT ?",
                (self._checked, limit),
            ).fetchall()
            missing = [row[0] for row in rows if row[0] > self._checked]
            # Below the first passage missing, each has its vector: later calls need not look there again.
            self._checked = (
                missing[0] - 1 if missing else db.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
            )
        unique = sorted({row[0]: row for row in rows}.values())[:limit]
        return [Pending(rowid, ts, passage_text(kind, asked, answered)) for rowid, ts, kind, asked, answered in unique]

    def _changed(self, db: sqlite3.Connection) -> list[tuple[int, float, str, str, str]]:
        """Open exchanges whose reply grew since their vector was made; after passages were dropped, every
        passage below the last checked id is looked at again (their ids may have been taken again)."""
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM logs l JOIN passages p ON p.id = l.open_id LEFT JOIN passage_vectors v "
            "ON v.id = p.id WHERE v.id IS NULL OR v.crc != passage_crc(p.kind, p.asked, p.answered)"
        ).fetchall()
        drops = db.execute("SELECT n FROM passage_vector_drops").fetchone()[0]
        if drops == self._drops:
            return rows
        if self._drops is None:  # first look: drops before the trigger existed (embeddings were off) are unknown
            db.execute(
                "DELETE FROM passage_vectors "
                "WHERE ts IS NOT (SELECT p.ts FROM passages p WHERE p.id = passage_vectors.id)"
            )
        self._drops = drops
        self._forget_dropped(db)
        self._checked = 0
        return rows

    def store(self, passages: Sequence[Pending], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors (normalised, float32) of these passages, in one transaction."""
        rows = [
            (passage.id, passage.ts, text_crc(passage.text), self._model, row)
            for passage, row in zip(passages, unit_rows(vectors), strict=True)
        ]
        with self._lock:
            db = self._connection()
            if db is None:
                return
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO passage_vectors (id, ts, crc, model, vector) VALUES (?, ?, ?, ?, ?)", rows
                )

    def nearest(
        self, query: Sequence[float], limit: int, since: float | None, until: float | None, floor: float = -1.0
    ) -> list[int]:
        """The ids of the `limit` passages closest to `query` (cosine, at least `floor`) in [since, until), best
        first."""
        with self._lock:
            db = self._connection()
            if db is None:
                return []
            self._load_new(db)
        return self._copy.nearest(query, limit, since, until, floor)

    def load(self) -> None:
        """Bring the in-memory copy up to date, so that the next search need not read the new vectors itself."""
        with self._lock:
            db = self._connection()
            if db is not None:
                self._load_new(db)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _connection(self) -> sqlite3.Connection | None:
        """The open connection to the index file, opened again when the index was rebuilt; None while it is absent."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            return None
        if self._db is not None and inode == self._inode:
            return self._db
        if self._db is not None:
            self._db.close()
        db = open_store(self.path, busy_timeout=5.0, cache=True, threads=True)  # a cache, as the index's own
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'passages'").fetchone():
            db.close()
            return None  # the index is being created: its tables come first
        db.executescript(_SCHEMA)
        db.execute("DELETE FROM passage_vectors WHERE model != ?", (self._model,))
        db.create_function(
            "passage_crc",
            3,
            lambda kind, asked, answered: text_crc(passage_text(kind, asked, answered)),
            deterministic=True,
        )
        self._db, self._inode = db, inode
        self._copy = VectorCopy()
        self._loaded = self._checked = 0
        self._drops = None
        return db

    def _load_new(self, db: sqlite3.Connection) -> None:
        """Add the vectors stored since the last search to the in-memory copy, replacing older ones of the same ids."""
        rows = db.execute(
            "SELECT v.seq, v.id, p.ts, v.vector FROM passage_vectors v JOIN passages p ON p.id = v.id WHERE v.seq > ? "
            "ORDER BY v.seq",
            (self._loaded,),
        ).fetchall()
        if rows:
            self._loaded = rows[-1][0]
            self._copy.add([row[1] for row in rows], [row[2] for row in rows], [row[3] for row in rows])

    def _forget_dropped(self, db: sqlite3.Connection) -> None:
        """Take passages the index dropped (MEMORY.md's old facts) out of the in-memory copy."""
        stored = db.execute("SELECT id FROM passage_vectors WHERE seq <= ?", (self._loaded,)).fetchall()
        self._copy.keep([row[0] for row in stored])
