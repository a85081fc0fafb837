"""Importing litellm: offline, quiet and only where a model is called (the import costs seconds)."""

from __future__ import annotations

import os
from typing import Any


def import_litellm() -> Any:
    """The litellm module, imported offline (the bundled price map) with its logging adopted and its chatter off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from bot.logs import adopt_library_loggers

    adopt_library_loggers()
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm
