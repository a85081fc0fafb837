import logging
import os
from pathlib import Path

import pytest

from bot.bus import Trust
from bot.setup.home import bundled
from bot.skills import Skill, SkillLibrary, parse_skill, skills_prompt
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "Do the thing.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\n{body}\n")
    return path


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_workspace_skills_override_built_ins_of_the_same_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "builtin", "weather", "name: weather\ndescription: Built-in weather.")
    write_skill(tmp_path / "builtin", "cron", "name: cron\ndescription: Built-in cron.")
    write_skill(tmp_path / "ws", "my-weather", "name: weather\ndescription: My own weather.", "Use my station.")
    skills = SkillLibrary([tmp_path / "builtin", tmp_path / "ws"]).skills()
    assert [(s.name, s.description) for s in skills] == [("cron", "Built-in cron."), ("weather", "My own weather.")]
    assert skills[1].instructions == "Use my station."


def test_availability_names_the_missing_binary_env_var_and_platform() -> None:
    skill = Skill("gh", "GitHub.", "...", Path("."), bins=("gh",), env=("GH_HOST",), platforms=("darwin",))
    assert skill.missing(which=lambda name: None, environ={}, platform="linux") == ["gh", "GH_HOST", "macOS"]
    present = skill.missing(which=lambda name: f"/usr/bin/{name}", environ={"GH_HOST": "x"}, platform="darwin")
    assert present == []


def test_prompt_lists_each_skill_on_one_line_and_includes_always_skills_whole() -> None:
    skills = [
        Skill("github", "Use GitHub.", "gh steps", Path("."), bins=("gh",)),
        Skill("house-style", "How we write.", "Always use British spelling.", Path("."), always=True),
        Skill("weather", "Weather anywhere.", "wttr.in steps", Path(".")),
    ]
    prompt = skills_prompt(skills, missing=lambda s: list(s.bins))
    assert "- github: Use GitHub. (unavailable: needs gh)" in prompt
    assert "- weather: Weather anywhere." in prompt and "wttr.in steps" not in prompt
    assert "## Skill: house-style\n\nAlways use British spelling." in prompt


def test_a_malformed_skill_is_skipped_with_a_warning_naming_its_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = write_skill(tmp_path, "good", "name: good\ndescription: Fine.")
    bad = write_skill(tmp_path, "bad", "name: bad\ndescription: [unclosed")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "SKILL.md").write_text("no frontmatter here")
    with caplog.at_level(logging.WARNING, logger="bot.skills"):
        skills = SkillLibrary([tmp_path]).skills()
    assert [s.name for s in skills] == ["good"] and skills[0].folder == good.parent
    assert str(bad) in caplog.text and str(tmp_path / "plain" / "SKILL.md") in caplog.text


def test_skill_files_are_parsed_once_and_again_only_when_they_change(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "notes", "name: notes\ndescription: Old.")
    now = [0.0]
    library = SkillLibrary([tmp_path], refresh=5.0, clock=lambda: now[0])
    first = library.skills()
    assert library.skills() is first
    path.write_text("---\nname: notes\ndescription: New and longer.\n---\nBody\n")
    assert library.skills()[0].description == "Old."  # file contents are checked every `refresh` seconds
    now[0] = 5.0
    assert library.skills()[0].description == "New and longer."
    assert "New and longer." in library.prompt()
    write_skill(tmp_path, "extra", "name: extra\ndescription: Added later.")
    os.utime(tmp_path, ns=(0, 1))  # the folder listing is cached by mtime: make sure it moved
    assert [s.name for s in library.skills()] == ["extra", "notes"]  # a new folder shows at once


def test_unchanged_skills_cost_one_stat_per_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(100):
        write_skill(tmp_path, f"s{i:03}", f"name: s{i:03}\ndescription: Skill {i}.")
    library = SkillLibrary([tmp_path, tmp_path / "missing"], clock=lambda: 0.0)
    prompt = library.prompt()
    stats: list[Path] = []
    real_stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, **kw: stats.append(self) or real_stat(self, **kw))
    assert library.prompt() is prompt
    assert stats == [tmp_path, tmp_path / "missing"]


def test_an_installed_root_is_looked_at_only_with_the_files_and_the_workspaces_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed, own = tmp_path / "installed", tmp_path / "ws"
    write_skill(installed, "notes", "name: notes\ndescription: Notes.")
    own.mkdir()
    now = [0.0]
    library = SkillLibrary([installed, own], refresh=5.0, clock=lambda: now[0], installed=[installed])
    prompt = library.prompt()
    stats: list[Path] = []
    real_stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, **kw: stats.append(self) or real_stat(self, **kw))
    assert library.prompt() is prompt and stats == [own]
    write_skill(installed, "extra", "name: extra\ndescription: Shipped later.")
    os.utime(installed, ns=(0, 1))
    assert [s.name for s in library.skills()] == ["notes"]
    now[0] = 5.0
    assert [s.name for s in library.skills()] == ["extra", "notes"]  # the installed root's with the files
    write_skill(own, "todo", "name: todo\ndescription: To do.")
    os.utime(own, ns=(0, 1))
    assert [s.name for s in library.skills()] == ["extra", "notes", "todo"]  # the workspace's at once


def test_frontmatter_errors_are_explained() -> None:
    with pytest.raises(ValueError, match="description"):
        parse_skill(Path("x"), "---\nname: x\n---\nbody")
    with pytest.raises(ValueError, match=r"requires\.bins"):
        parse_skill(Path("x"), "---\ndescription: d\nrequires: {bins: [1]}\n---\nbody")
    skill = parse_skill(Path("folder-name"), "---\ndescription: d\nos: macos\nrequires: {env: TOKEN}\n---\nbody")
    assert (skill.name, skill.platforms, skill.env) == ("folder-name", ("darwin",), ("TOKEN",))


def test_the_built_in_skills_all_parse(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bot.skills"):
        skills = SkillLibrary([bundled("skills")]).skills()
    names = {s.name for s in skills}
    assert {"memory", "cron", "summarize", "weather", "github", "skill-creator"} <= names
    assert caplog.text == ""
    assert next(s for s in skills if s.name == "github").bins == ("gh",)
    assert all(len(s.instructions) > 500 for s in skills)


async def test_system_prompt_lists_skills_with_availability_and_always_skills(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        skills = bot.config.workspace / "skills"
        write_skill(skills, "style", "name: style\ndescription: House style.\nalways: true", "Write like Orwell.")
        write_skill(skills, "radio", "name: radio\ndescription: Radio.\nrequires: {bins: [no-such-binary-xyz]}")
        await bot.ask("hi")
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "- radio: Radio. (unavailable: needs no-such-binary-xyz)" in system
    assert "- weather: " in system and "Open-Meteo" not in system
    assert "## Skill: style\n\nWrite like Orwell." in system


async def test_a_guest_can_load_a_skill(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("load_skill", {"name": "weather"}),)), Text("It is sunny."))
    async with Harness(tmp_path, fake_llm) as bot:
        reply = await bot.ask("weather in Oslo?", chat="telegram:9", sender="9", trust=Trust.GUEST)
    assert reply == "It is sunny."
    first, second = fake_llm.requests
    assert "load_skill" in [tool["function"]["name"] for tool in first["tools"]]
    [result] = tool_results(second)
    assert result.startswith("# Skill: weather") and "wttr.in" in result


async def test_load_skill_reports_missing_requirements_and_unknown_names(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("load_skill", {"name": "radio"}), ("load_skill", {"name": "nope"}))), Text("ok"))
    async with Harness(tmp_path, fake_llm) as bot:
        write_skill(bot.config.workspace / "skills", "radio", "description: Radio.\nrequires: {env: [RADIO_KEY_XYZ]}")
        await bot.ask("play the radio")
    unavailable, unknown = tool_results(fake_llm.requests[1])
    assert unavailable == "The radio skill is unavailable here: it needs RADIO_KEY_XYZ."
    assert "no skill named 'nope'" in unknown and "weather" in unknown
