"""`engine run`'s live progress on a terminal: a bar, done/total, rate, time left, and the trials
passed, failed and in error so far (per variant while a few variants run)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from engine.events import kinds as k
from engine.presentation.status_words import counts_line

PER_VARIANT_MAX = 4  # more variants than this: one line for the run, so the display fits a screen


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    def add(self, event: k.Event) -> None:
        if isinstance(event, k.TrialGraded):
            if event.grading == 0:  # a regrade round is not progress of this run
                self.passed, self.failed = self.passed + event.passed, self.failed + (not event.passed)
        elif isinstance(event, k.TrialFailed):
            self.errors += 1
        elif isinstance(event, k.TrialSkipped):
            self.skipped += 1

    def describe(self) -> str:
        skipped = f" · skipped {self.skipped}" if self.skipped else ""
        return counts_line(self.passed, self.failed, self.errors) + skipped


FINAL = (k.TrialGraded, k.TrialFailed, k.TrialSkipped)


@dataclass
class RunProgress:
    """Folds the run's events into rich progress tasks: one for the run, one per variant when a few
    variants share a known total (a tuning session proposes variants as it goes: one line)."""

    bar: Progress
    run: Counts = field(default_factory=Counts)
    proposed: list[str] = field(default_factory=list)
    variants: dict[str, tuple[TaskID, Counts]] = field(default_factory=dict)
    task: TaskID = field(init=False)

    def __post_init__(self) -> None:
        self.task = self.bar.add_task("trials", total=None, counts=self.run.describe())

    def on(self, event: k.Event) -> None:
        if isinstance(event, k.VariantProposed):
            self.proposed.append(event.variant.name)
        elif isinstance(event, k.RunStarted):
            self._started(event)
        elif isinstance(event, FINAL):
            self.run.add(event)
            self.bar.update(self.task, advance=1, counts=self.run.describe())
            if event.variant in self.variants:
                task, counts = self.variants[event.variant]
                counts.add(event)
                self.bar.update(task, advance=1, counts=counts.describe())

    def _started(self, event: k.RunStarted) -> None:
        total = event.trials_total or None  # a tuning session does not know its total up front
        self.bar.update(self.task, total=total, description=event.experiment)
        n = len(self.proposed)
        if total is None or not 2 <= n <= PER_VARIANT_MAX or total % n:
            return
        for name in self.proposed:
            task = self.bar.add_task(f"  {name}", total=total // n, counts=Counts().describe())
            self.variants[name] = (task, Counts())


class RateColumn(ProgressColumn):
    """Trials per second (rich's own speed column counts bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(rate_text(speed), style="progress.data.speed")


def rate_text(speed: float | None) -> str:
    """Trials per second, at most 7 characters (a fast run's rate is never cut): 8.3/s, 412/s, 178k/s."""
    if speed is None:
        return ""
    if speed < 100:
        return f"{speed:.1f}/s"
    return f"{speed:.0f}/s" if speed < 10_000 else f"{speed / 1000:.0f}k/s"


def _whole() -> Column:
    return Column(no_wrap=True)  # a figure is shown whole: the name gives way


def progress_bar(console: Console | None = None, disable: bool = False) -> Progress:
    # at 100 columns only the run's or variant's name is cut (with an ellipsis), never a figure
    # (the elapsed time is left out: the counts, failures included, need the room)
    name = Column(no_wrap=True, overflow="ellipsis", max_width=16)
    columns = (
        TextColumn("{task.description}", table_column=name),
        BarColumn(bar_width=8, table_column=_whole()),
        MofNCompleteColumn(table_column=_whole()),
        RateColumn(table_column=_whole()),
        TextColumn("eta", table_column=_whole()),
        TimeRemainingColumn(table_column=_whole()),
        TextColumn("{task.fields[counts]}", table_column=_whole()),
    )
    return Progress(*columns, console=console, disable=disable, transient=True)
