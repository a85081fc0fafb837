"""The bench's modules import each other as `bench/` scripts do: the bench folder goes on sys.path, last, so that
none of its script names can hide an installed package."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))
