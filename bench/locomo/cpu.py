"""The CPU one coroutine costs: its own steps on the event loop's thread, plus the work it hands to worker threads
through asyncio.to_thread; other tasks running meanwhile are not counted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
_workers: ContextVar[list[float] | None] = ContextVar("locomo_worker_cpu", default=None)


@contextmanager
def workers_noted() -> Iterator[None]:
    """Within it, asyncio.to_thread notes the worker's CPU where a `measured` coroutine asked for the thread."""
    original = asyncio.to_thread

    async def to_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        spent = _workers.get()
        if spent is None:
            return await original(function, *args, **kwargs)

        def run() -> T:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent.append(time.thread_time() - started)

        return await original(run)

    asyncio.to_thread = to_thread  # bench-only observation, undone on the way out
    try:
        yield
    finally:
        asyncio.to_thread = original


def _steps(coroutine: Coroutine[Any, Any, T], spent: list[float]) -> Generator[Any, Any, T]:
    """Drive `coroutine`, noting the thread CPU of each of its steps (not of what runs while it waits)."""
    value: Any = None
    error: BaseException | None = None
    while True:
        started = time.thread_time()
        try:
            waiting = coroutine.throw(error) if error is not None else coroutine.send(value)
        except StopIteration as done:
            return done.value
        finally:
            spent.append(time.thread_time() - started)
        try:
            value, error = (yield waiting), None
        except BaseException as raised:  # handed on to the coroutine, as await does
            value, error = None, raised


class _Stepped:
    def __init__(self, coroutine: Coroutine[Any, Any, T], spent: list[float]) -> None:
        self._coroutine = coroutine
        self._spent = spent

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield from _steps(self._coroutine, self._spent))


def measured(function: Callable[..., Coroutine[Any, Any, T]], costs: list[float]) -> Callable[..., Awaitable[T]]:
    """`function` noting in `costs` the CPU seconds each call cost: its own steps, and its worker threads' within
    `workers_noted`."""

    async def run(*args: Any, **kwargs: Any) -> T:
        spent: list[float] = []
        token = _workers.set(spent)
        try:
            return await _Stepped(function(*args, **kwargs), spent)
        finally:
            _workers.reset(token)
            costs.append(sum(spent))

    return run
