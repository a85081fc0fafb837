"""The Matrix fixtures: one Synapse per test session (skipped with the reason where it is not installed), the
owner and a stranger registered once, and a fresh bot account with its own rooms per test."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from tests.support.matrix_world import MatrixWorld
from tests.support.synapse import MatrixUser, Synapse, synapse_problem

logger = logging.getLogger(__name__)


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A started Synapse on 127.0.0.1, shared by every Matrix test of the session."""
    if (problem := synapse_problem()) is not None:
        pytest.skip(problem)
    server = Synapse(tmp_path_factory.mktemp("synapse"))
    server.start()
    logger.info("Synapse started in %.1fs", server.started_in)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def matrix_people(synapse: Synapse) -> tuple[MatrixUser, MatrixUser]:
    """The owner and a stranger, the same accounts all session."""
    return synapse.register("owner", exact=True), synapse.register("stranger", exact=True)


@pytest_asyncio.fixture
async def matrix_world(synapse: Synapse, matrix_people: tuple[MatrixUser, MatrixUser]) -> AsyncIterator[MatrixWorld]:
    """A fresh bot account behind a recording front, and a group room the owner made with it and the stranger."""
    async with MatrixWorld(synapse, matrix_people) as world:
        yield world
