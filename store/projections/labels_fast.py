"""The two events a run holds one of per trial, read for the few fields the labels fold needs.

The full decode of a 50,000-trial run's grades (reasons, raw judge answers) takes most of a second;
these structs skip what the fold does not read. An event stored at another version than its class's
current one, or any other event, is left to the engine's own decoder (None here).
"""

from __future__ import annotations

import msgspec

from engine.events import kinds as k


class Grade(msgspec.Struct, gc=False):
    name: str
    passed: bool
    error: str = ""
    judge_model: str = ""
    spread: float | None = None


class Completed(msgspec.Struct, tag_field="type", tag="trial.completed", gc=False):
    variant: str
    case: str
    repeat: int
    output_hash: str
    v: int = 1


class Graded(msgspec.Struct, tag_field="type", tag="trial.graded", gc=False):
    variant: str
    case: str
    repeat: int
    grades: list[Grade] = []
    grading: int = 0
    v: int = 1


class GradedKey(msgspec.Struct, tag_field="type", tag="trial.graded", gc=False):
    variant: str
    case: str
    repeat: int


_TRIAL = msgspec.msgpack.Decoder(Completed | Graded)
_KEY = msgspec.msgpack.Decoder(GradedKey)
_VERSIONS = {Completed: k.TrialCompleted.VERSION, Graded: k.TrialGraded.VERSION}


def decode_trial(data: bytes) -> Completed | Graded | None:
    try:
        event = _TRIAL.decode(data)
    except msgspec.DecodeError:  # (ValidationError included) another event type, or damage
        return None
    return event if event.v == _VERSIONS[type(event)] else None


def graded_key(data: bytes) -> tuple[str, str, int] | None:
    try:
        key = _KEY.decode(data)
    except msgspec.DecodeError:
        return None
    return key.variant, key.case, key.repeat
