"""What a tuning session works with, shared by the session (session.py) and its race (race.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.events.spec import ExperimentSpec
from engine.runtime.pipeline import Pipeline
from engine.runtime.workers import Workers
from engine.store.contract import EventStore


@dataclass
class TuneRun:
    """What a tuning session works with: its spec, the run's pipeline and pools, where outputs are."""

    spec: ExperimentSpec
    run_id: str
    origin: str
    pipe: Pipeline
    workers: Workers
    load_output: Callable[[str], str]
    source: str = ""
    log: EventStore | None = None  # to read earlier sessions of the experiment (scheduled ones)

    @property
    def base_dir(self) -> Path:
        """The experiment file's folder (an agent's relative scripts are there), as the runner has it."""
        return Path(self.source).resolve().parent if self.source else Path.cwd()
