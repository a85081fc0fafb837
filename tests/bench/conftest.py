"""The bench's modules import each other as `bench/` scripts do: from the bench folder on sys.path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
