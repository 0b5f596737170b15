"""Generation parameters an HTTP target would drop: an OpenAI-compatible or Anthropic target sends
the parameters it knows, plus those its `extra_params` names; anything else in a `params` table
would be silently left out of every request (a misspelled `temprature` makes two variants
identical), so it is refused with the closest known name."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from engine.events.spec import TargetSpec
from engine.events.targets import TARGETS
from engine.input.experiment_plan import ExperimentPlan

Fail = Callable[[str, str], None]


def check_sent_params(plan: ExperimentPlan, fail: Fail) -> None:
    """After the variants' targets are checked: each variant's params against its own target."""
    spec = plan.spec
    _check(spec.target, "params", spec.params, fail)
    for variant, field in zip(plan.variants, plan.origins, strict=True):
        _check(plan.targets[variant.name], f"{field}.params", variant.params, fail)
    if spec.kind == "tune" and spec.tune is not None:
        for i, p in enumerate(spec.tune.parameters):
            _check(spec.target, f"tune.parameters[{i}].name", {p.name: None}, fail, named=False)


def _check(target: TargetSpec, field: str, params: Iterable[str], fail: Fail, named: bool = True) -> None:
    sent = TARGETS.of(target).sent_params  # what an HTTP kind puts in its request body
    if sent is None:
        return
    extra = hasattr(target, "extra_params")  # an HTTP kind sends a server's own parameter when named
    known = [*sent, *getattr(target, "extra_params", [])]
    for name in params:
        if name not in known:
            fail(f"{field}.{name}" if named else field, unsent(name, target.kind, known, extra))


def unsent(name: str, kind: str, known: list[str], extra: bool = True) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
    if not extra:  # the embedded model: its own few parameters, nothing else reaches it
        guess = f"did you mean {close[0]!r}? " if close else ""
        return f"not read by {kind}: {guess}(it reads {', '.join(known)})"
    if close:
        return f"not sent by {kind}: did you mean {close[0]!r}? (or name it in target.extra_params)"
    return f"not sent by {kind}: a server's own parameter is sent when target.extra_params names it"
