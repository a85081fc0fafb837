"""`relaybot memory search | reindex`: a chat's memory searched from the command line, its index rebuilt."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.cluster.redis import RedisState
from bot.config.loader import load_config
from bot.config.paths import sessions_dir
from bot.memory.members import FileMembers
from bot.memory.redis_members import RedisMembers
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.store import SessionStore
from tests.support.cli_process import env_for


def test_search_shows_a_chats_passages_with_dates_and_reindex_rebuilds_every_scope(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\nworkspace: ws\nstate_dir: state\n")
    config = load_config(tmp_path / "config.yaml", env={})
    store = SessionStore(sessions_dir(config))
    session = store.get("telegram:123")
    header = "[telegram DM 123 · from Ann (123) · 2026-04-02 09:00 Thursday]\n"
    store.append(session, [{"role": "user", "content": header + "Our new puppy is called Biscuit"}])
    store.append(session, [{"role": "assistant", "content": "What a lovely name!"}])
    FileMembers(config.state_dir / "memory_scopes").add("memory/chats/telegram_-5", "telegram:123")
    (config.workspace / "memory").mkdir(parents=True)
    (config.workspace / "memory" / "HISTORY.md").write_text("# History\n\n[2026-01-01 10:00] New year plans.\n")
    runner, env = CliRunner(), env_for(tmp_path)

    found = runner.invoke(app, ["memory", "search", "what's the puppy's name?", "--chat", "telegram:123"], env=env)
    assert found.exit_code == 0, found.output
    assert found.stdout.splitlines()[0].endswith(", Ann: Our new puppy is called Biscuit")
    assert found.stdout.splitlines()[1] == "  you replied: What a lovely name!"
    nothing = runner.invoke(app, ["memory", "search", "giraffe", "--chat", "telegram:123"], env=env)
    assert nothing.stdout == "Nothing in memory/chats/telegram_-5 matches 'giraffe'.\n"
    assert runner.invoke(app, ["memory", "search", "what was it?"], env=env).exit_code == 1
    assert runner.invoke(app, ["memory", "search", "puppy", "--chat", "slack:9"], env=env).exit_code == 1

    rebuilt = runner.invoke(app, ["memory", "reindex"], env=env)
    assert rebuilt.stdout.splitlines() == ["memory: 1 passages", "memory/chats/telegram_-5: 1 passages"]
    one = runner.invoke(app, ["memory", "reindex", "--chat", "telegram:123"], env=env)
    assert one.stdout == "memory/chats/telegram_-5: 1 passages\n"


def test_search_and_reindex_work_on_an_index_kept_in_redis(tmp_path: Path, redis_url: str) -> None:
    config_text = (
        f"llm:\n  model: openai/x\nworkspace: ws\nstate_dir: state\nbus:\n  backend: redis\n  url: {redis_url}\n"
    )
    (tmp_path / "config.yaml").write_text(config_text + "memory:\n  index: redis\n")
    shared = RedisState(redis_url)
    store = RedisSessionStore(shared)
    session = store.get("telegram:123")
    header = "[telegram DM 123 · from Ann (123) · 2026-04-02 09:00 Thursday]\n"
    store.append(session, [{"role": "user", "content": header + "Our new puppy is called Biscuit"}])
    store.append(session, [{"role": "assistant", "content": "What a lovely name!"}])
    RedisMembers(shared).add("memory/chats/telegram_-5", "telegram:123")
    runner, env = CliRunner(), env_for(tmp_path)

    found = runner.invoke(app, ["memory", "search", "puppy name", "--chat", "telegram:123"], env=env)
    assert found.exit_code == 0, found.output
    assert found.stdout.splitlines()[0].endswith(", Ann: Our new puppy is called Biscuit")
    scope = shared.key("memory-index", "{memory/chats/telegram_-5}")
    assert shared.client.hlen(f"{scope}:meta") == 1 and not (tmp_path / "state" / "memory_index").exists()
    shared.client.hset(f"{scope}:marks", "pruned", "stale")  # whatever the keys hold, a reindex starts afresh

    one = runner.invoke(app, ["memory", "reindex", "--chat", "telegram:123"], env=env)
    assert one.stdout == "memory/chats/telegram_-5: 1 passages\n"
    assert shared.client.hget(f"{scope}:marks", "pruned") != "stale"
    shared.client.close()
