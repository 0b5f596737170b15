"""Export as JSON lines: one object per trial, with its output, the agent's stderr and its transcript."""

from __future__ import annotations

import msgspec

from engine.store.contract import EventStore
from engine.store.projections.trials import RunTrials
from engine.views.export import Write, agent_messages, output_of, reproducer_of, stderr_of, trial_fields


def write(log: EventStore, run: RunTrials, write: Write) -> int:
    encode = msgspec.json.encode
    trials = run.finished()
    for rec in trials:
        line = {
            "run_id": run.run_id,
            **trial_fields(rec),
            "output": output_of(log, rec),
            "stderr": stderr_of(log, rec),
            "transcript": agent_messages(log, rec),  # the agent's own (ENGINE_TRANSCRIPT), or null
            "reproducer": reproducer_of(run, rec),
        }
        write(encode(line).decode() + "\n")
    return len(trials)
