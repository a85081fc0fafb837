"""Python's cyclic collector held to a long-running gateway's shape: what start-up built lives as long as the process,
so the collector's full passes (a hundred milliseconds and more over a started gateway's objects) stop walking it."""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger(__name__)


def freeze_started() -> int:
    """Collect once, then move every object alive into the collector's permanent generation; how many were moved.
    Frozen objects are still freed when nothing refers to them; only a cycle among them is never collected."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    logger.debug("froze %d objects built at start", frozen)
    return frozen
