"""What `engine run` shows while it runs: its notes as the run starts, then the progress bar (cli.run.bar)
on a terminal. Without one (or with --quiet) there is no bar, and rich's progress module is not imported."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import trio

from engine.events import kinds as k

if TYPE_CHECKING:
    from engine.cli.run.bar import RunProgress


async def show_progress(receive: trio.MemoryReceiveChannel[k.Event], quiet: bool, notes: list[str]) -> None:
    """The progress display; `notes` go to stderr as the run starts, before its first trial."""
    from engine.cli.wrap import fold

    show = not quiet and sys.stderr.isatty()
    with _bar(show) as progress:
        async with receive:
            async for first in receive:
                for event in _and_the_rest(receive, first):  # a burst of events costs one turn
                    if notes and isinstance(event, k.RunStarted):
                        for line in notes:
                            print(fold(line), file=sys.stderr, flush=True)
                        notes = []
                    if progress is not None:
                        progress.on(event)


@contextmanager
def _bar(show: bool) -> Iterator[RunProgress | None]:
    if not show:
        yield None
        return
    from engine.cli.run.bar import RunProgress, progress_bar

    with progress_bar() as bar:
        yield RunProgress(bar)


def _and_the_rest(receive: trio.MemoryReceiveChannel[k.Event], first: k.Event) -> Iterator[k.Event]:
    yield first
    while True:
        try:
            yield receive.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return
