"""The kind contract (engine.actors.kind_contract) over every registered target and grader kind:
engine's own and any installed package's."""

from __future__ import annotations

import pytest

from engine.actors.kind_contract import check_grader_kind, check_target_kind
from engine.events.graders import GRADERS
from engine.events.targets import TARGETS


@pytest.mark.parametrize("name", GRADERS.names())
def test_every_grader_kind_keeps_the_contract(name: str) -> None:
    kind = GRADERS.get(name)
    assert kind is not None
    check_grader_kind(kind)


@pytest.mark.parametrize("name", TARGETS.names())
def test_every_target_kind_keeps_the_contract(name: str) -> None:
    kind = TARGETS.get(name)
    assert kind is not None
    check_target_kind(kind)
