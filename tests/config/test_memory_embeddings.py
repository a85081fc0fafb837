"""`memory.embeddings`: off unless set, keys read as other secrets, bad values named."""

from pathlib import Path

import pytest

from bot.config.loader import load_config
from bot.errors import ConfigError
from bot.setup.home import bundled


def test_embeddings_are_off_by_default_and_read_with_their_defaults(tmp_path: Path) -> None:
    assert load_config(bundled("config.example.yaml"), env={}).memory.embeddings is None
    path = tmp_path / "config.yaml"
    path.write_text(
        "memory:\n  embeddings:\n    model: nomic-embed-text\n    api_base: http://127.0.0.1:11434/v1\n"
        '    api_key: "${EMBED_KEY}"\n    timeout: 10s\n'
    )
    embeddings = load_config(path, env={"EMBED_KEY": "local-secret"}).memory.embeddings
    assert embeddings is not None
    assert (embeddings.model, embeddings.batch_size, embeddings.min_similarity, embeddings.timeout) == (
        "nomic-embed-text",
        64,
        0.3,
        10.0,
    )
    assert embeddings.api_key.get_secret_value() == "local-secret" and "local-secret" not in repr(embeddings)


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ("{model: ''}", "memory.embeddings.model"),
        ("{model: m, batch: 3}", "memory.embeddings.batch"),
        ("{model: m, min_similarity: 2}", "memory.embeddings.min_similarity"),
    ],
)
def test_a_bad_embeddings_value_names_its_key(tmp_path: Path, section: str, named: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"memory:\n  embeddings: {section}\n")
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load_config(path, env={})


def test_a_redis_memory_index_needs_the_redis_bus_and_takes_embeddings(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    redis_bus = "bus:\n  backend: redis\n  url: redis://127.0.0.1:6379/0\n"
    path.write_text(redis_bus + "memory:\n  index: redis\n")
    assert load_config(path, env={}).memory.index == "redis"
    path.write_text("memory:\n  index: redis\n")
    with pytest.raises(ConfigError, match="needs bus.backend: redis"):
        load_config(path, env={})
    path.write_text(redis_bus + "memory:\n  index: redis\n  embeddings:\n    model: nomic-embed-text\n")
    memory = load_config(path, env={}).memory
    assert memory.index == "redis" and memory.embeddings is not None and memory.embeddings.model == "nomic-embed-text"


def test_the_local_model_needs_no_server_and_refuses_one(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory:\n  embeddings:\n    model: local\n")
    embeddings = load_config(path, env={}).memory.embeddings
    assert embeddings is not None and embeddings.local and embeddings.api_base is None
    for key, value in (("api_base", "http://127.0.0.1:11434/v1"), ("api_key", "sk-local")):
        path.write_text(f"memory:\n  embeddings:\n    model: local\n    {key}: {value}\n")
        with pytest.raises(ConfigError, match=rf"memory\.embeddings\.{key}: .*runs in this process"):
            load_config(path, env={})
