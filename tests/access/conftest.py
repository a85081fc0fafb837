"""The `book` fixture: pairing books on the JSON file and on Redis, for every access test."""

from pathlib import Path

import pytest

from tests.access.books import Books, make_books


@pytest.fixture(params=["file", "redis"])
def book(request: pytest.FixtureRequest, tmp_path: Path) -> Books:
    """Makes pairing books on one store, as separate processes would: the JSON file, or one Redis."""
    return make_books(request, tmp_path)
