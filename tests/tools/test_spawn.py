"""The spawn tool hands its task to whatever Spawner it was given and tells the model the task started."""

from __future__ import annotations

from bot.tools.base import ToolContext
from bot.tools.spawn import SpawnTool


class RecordingSpawner:
    """A Spawner that only remembers what it was asked to start."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str, ToolContext]] = []

    def spawn(self, task: str, label: str, origin: ToolContext) -> str:
        self.started.append((task, label, origin))
        return "ab12cd34"


async def test_the_task_goes_to_the_spawner_with_the_callers_context(ctx: ToolContext) -> None:
    spawner = RecordingSpawner()
    answer = await SpawnTool(spawner).run({"task": "Research the train times", "label": "trains"}, ctx)
    assert spawner.started == [("Research the train times", "trains", ctx)]
    assert answer.startswith("Started background task ab12cd34 ('trains').")


async def test_without_a_label_the_task_names_itself_in_40_characters(ctx: ToolContext) -> None:
    spawner = RecordingSpawner()
    task = "Compare the electricity tariffs of the three providers in town"
    await SpawnTool(spawner).run({"task": task}, ctx)
    assert spawner.started[0][1] == task[:40]
