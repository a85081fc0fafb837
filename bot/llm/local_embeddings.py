"""The in-process embedding model (`memory.embeddings.model: local`): the static token vectors the wordllama package
ships (l2_supercat, 256 dimensions), mean-pooled over a text's tokens as wordllama does. No server, no key, no
download: the weights and the tokenizer are files of the installed package (`relaybot[local-embeddings]`).

wordllama's own loader is not used: it looks for the tokenizer in a folder the wheel does not ship (and would try a
download), and importing it sets up the root logger. Its files, read with safetensors and tokenizers, are all it takes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import ProviderError
from bot.llm.embeddings import Embedded

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

NAME = "local/wordllama-l2_supercat-256"  # what the vectors are stored under: another model's are never mixed in
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
PACKAGES = ("wordllama", "safetensors", "tokenizers")
INSTALL = "pip install 'relaybot[local-embeddings]'"
INLINE_CHARS = 2000  # texts this short are embedded on the caller's thread: a hand-off to a worker costs more


def missing_packages() -> list[str]:
    """The packages the local model needs that are not installed (found without importing them)."""
    return [name for name in PACKAGES if find_spec(name) is None]


@dataclass(frozen=True, slots=True)
class _Model:
    table: NDArray[np.float32]  # one row per token id
    tokenizer: Tokenizer


class LocalEmbeddings:
    """Texts to unit vectors in this process; loaded on first use (about 32 MB), in a worker thread."""

    model = NAME

    def __init__(self, root: Path | None = None) -> None:
        self._root = root  # the wordllama package's folder; found on first use when None
        self._loading = threading.Lock()
        self._loaded: _Model | None = None

    async def embed(self, texts: Sequence[str]) -> Embedded:
        """The vectors of `texts`, in order; costs nothing. ProviderError when the model cannot be loaded."""
        batch = list(texts)
        if not batch:
            return Embedded([], 0, 0.0)
        if self._loaded is not None and sum(map(len, batch)) <= INLINE_CHARS:
            return self._embedded(self._loaded, batch)
        return await asyncio.to_thread(lambda: self._embedded(self._model(), batch))

    def _model(self) -> _Model:
        with self._loading:
            if self._loaded is None:
                self._loaded = _load(self._root)
            return self._loaded

    @staticmethod
    def _embedded(model: _Model, texts: list[str]) -> Embedded:
        import numpy as np

        vectors = []
        tokens = 0
        for text in texts:  # one at a time: encode_batch would spread over every core, and warn at each fork
            ids = np.asarray(model.tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.intp)
            tokens += len(ids)
            pooled = model.table[ids].mean(axis=0) if len(ids) else np.zeros(model.table.shape[1], np.float32)
            norm = float(np.linalg.norm(pooled))
            vectors.append((pooled / norm if norm else pooled).tolist())
        return Embedded(vectors, tokens, 0.0)


def _load(root: Path | None) -> _Model:
    """The token table and tokenizer from the installed wordllama package; ProviderError naming what is missing."""
    if missing := missing_packages():
        raise ProviderError(f"the local embedding model needs {', '.join(missing)}: {INSTALL}")
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    if root is None:
        spec = find_spec("wordllama")
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            raise ProviderError(f"the wordllama package has no folder: {INSTALL}")
        root = Path(next(iter(locations)))
    try:
        table = load_file(str(root / WEIGHTS))["embedding.weight"]
        tokenizer = Tokenizer.from_file(str(root / TOKENIZER))
    except Exception as exc:  # safetensors and tokenizers raise kinds of their own; one error for the caller
        raise ProviderError(f"the local embedding model did not load from {root}: {type(exc).__name__}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return _Model(np.ascontiguousarray(table, dtype=np.float32), tokenizer)
