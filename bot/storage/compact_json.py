"""Compact JSON with text kept as UTF-8 characters, from one C encoder made at import instead of one per call."""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring
from typing import Any


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# `json.dumps` with any argument builds a JSONEncoder and its C encoder on every call, most of what a short value costs.
# The C encoder's arguments: no circular check, default, string escaper, indent, separators, sort_keys, skipkeys,
# allow_nan.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # typeshed does not declare it
_encode_chunks: Callable[[Any, bool], Iterator[str]] = (
    _c_make_encoder(None, _unencodable, encode_basestring, None, ":", ",", False, False, True)
    if _c_make_encoder is not None
    else json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).iterencode
)


def dumps(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, without the per-call encoder."""
    return "".join(_encode_chunks(value, False))
