"""What every target and grader kind must do, as checks a test suite runs (engine's over every
registered kind, a plugin author's over theirs):

    from engine.actors.kind_contract import check_grader_kind, check_target_kind
    def test_my_grader(): check_grader_kind(MY_GRADER)

Each check raises AssertionError saying what the kind did wrong. A kind's `example` fields build the
spec checked; "{url}" in them is the address of a server that accepts and never answers, so a kind
that calls a model shows how it behaves when the model hangs. Time runs on trio's mock clock, which
jumps ahead whenever everything waits: a timeout is reached at once, and no check races the clock.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
import trio
import trio.testing

from engine.actors.graders.base import Submission
from engine.actors.graders.factory import GraderContext, make_grader
from engine.actors.targets.base import TargetError, TargetRequest, TargetResponse
from engine.actors.targets.registry import target_maker
from engine.events import codec
from engine.events import kinds as k
from engine.events.graders import GraderKind
from engine.events.kind_convert import convert_kinded
from engine.events.kind_registry import Kind
from engine.events.spec import CaseSpec, ExperimentSpec, VariantSpec, fingerprint
from engine.events.targets import TargetKind

PATIENCE_S = 30.0  # of the mock clock: a call still running then is cancelled from outside
CASE = CaseSpec(id="c1", prompt="Say hello.", expected="hello")
WRONG = [[{"not": "a value"}]]  # what no field of a spec takes


def check_grader_kind(kind: GraderKind) -> None:
    spec = _spec(kind, "http://127.0.0.1:9")
    check_round_trip(kind, spec)
    check_field_errors(kind)
    if not kind.pairwise:  # a pairwise judge is given pairs once every trial has run, not one output
        _run(functools.partial(_grader_behaviour, kind))


def check_target_kind(kind: TargetKind) -> None:
    spec = _spec(kind, "http://127.0.0.1:9")
    check_round_trip(kind, spec)
    check_field_errors(kind)
    _run(functools.partial(_target_behaviour, kind))


def check_round_trip(kind: Kind, spec: Any) -> None:
    """Its spec reads back equal from JSON, and from the log inside a stored experiment definition."""
    back = convert_kinded(msgspec.json.decode(msgspec.json.encode(spec)), type(spec))
    assert back == spec, f"{kind.name}: the spec read back from JSON differs: {back!r} != {spec!r}"
    field = "graders" if isinstance(kind, GraderKind) else "target"
    value = [spec] if field == "graders" else spec
    experiment = msgspec.structs.replace(ExperimentSpec(name="contract"), **{field: value})
    stored = k.ExperimentDefined(run_id="r", spec=experiment, spec_hash=fingerprint(experiment))
    read = codec.decode(codec.encode(stored))
    assert isinstance(read, k.ExperimentDefined)
    assert read.spec == experiment, f"{kind.name}: the stored definition reads back different: {read!r}"


def check_field_errors(kind: Kind) -> None:
    """A wrong value in any field of the spec is refused naming that field, from the file's top."""
    named = 0
    for name in kind.spec.__struct_fields__:
        at = f"$.graders[0].{name}" if isinstance(kind, GraderKind) else f"$.target.{name}"
        try:
            _in_experiment(kind, {**_fields(kind, "http://127.0.0.1:9"), name: WRONG})
        except msgspec.ValidationError as exc:
            assert at in str(exc), f"{kind.name}: a wrong {name} is refused without naming it: {exc}"
            named += 1
    assert named, f"{kind.name}: no field refuses a wrong value"
    try:
        _in_experiment(kind, {**_fields(kind, "x"), "no_such_field": 1})
    except msgspec.ValidationError as exc:
        assert "no_such_field" in str(exc), f"{kind.name}: an unknown field is refused unnamed: {exc}"
    else:
        raise AssertionError(f"{kind.name}: an unknown field is accepted (a typo would be ignored)")


async def _grader_behaviour(kind: GraderKind, url: str) -> None:
    spec = _spec(kind, url)
    context = GraderContext(make_target=target_maker())
    submission = Submission(case=CASE, output="hello", variant=VariantSpec(name="v"), exit_code=0)
    grader = make_grader(spec, context)
    found = await grader.grade(submission)
    assert isinstance(found, k.GraderResult), f"{kind.name}: grade() returned {found!r}, not a GraderResult"
    await _cancelled_at_once(kind, lambda: grader.grade(submission))
    with trio.move_on_after(PATIENCE_S):
        late = await grader.grade(submission)
        assert isinstance(late, k.GraderResult), f"{kind.name}: grade() returned {late!r}"
    await grader.aclose()


async def _target_behaviour(kind: TargetKind, url: str) -> None:
    spec = msgspec.structs.replace(_spec(kind, url), timeout_s=5.0)
    target = target_maker()(spec)
    variant, prompt = VariantSpec(name="v"), CASE.prompt
    request = TargetRequest(run_id="r", variant=variant, case=CASE, repeat=0, prompt=prompt, timeout_s=5.0)
    try:
        found = await target.call(request)
        assert isinstance(found, TargetResponse), f"{kind.name}: call() returned {found!r}"
    except TargetError as exc:  # its own timeout (5 s of the mock clock), or the example's failure
        assert exc.kind in ("timeout", "infra", "model", "config"), f"{kind.name}: error kind {exc.kind!r}"
    await _cancelled_at_once(kind, lambda: target.call(request))
    with trio.move_on_after(PATIENCE_S):
        try:
            await target.call(request)
        except TargetError:
            pass
    await target.aclose()


async def _cancelled_at_once(kind: Kind, call: Callable[[], Awaitable[Any]]) -> None:
    """A call cancelled before it starts ends at once: cancelled, or done if it never waits; the
    cancellation is never turned into a failure of the call (which would be logged as the trial's)."""
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await call()
        except TargetError as exc:
            if isinstance(exc.__context__, trio.Cancelled):
                raise AssertionError(f"{kind.name}: a cancelled call raised {exc!r}") from None


def _in_experiment(kind: Kind, raw: dict[str, Any]) -> ExperimentSpec:
    """An experiment file's conversion, the spec where a file puts its kind."""
    where = {"graders": [raw]} if isinstance(kind, GraderKind) else {"target": raw}
    return convert_kinded({"name": "contract", **where}, ExperimentSpec)  # type: ignore[no-any-return]


def _fields(kind: Kind, url: str) -> dict[str, Any]:
    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{url}", url)
        if isinstance(value, Mapping):
            return {key: fill(v) for key, v in value.items()}
        return [fill(v) for v in value] if isinstance(value, list) else value

    return {"kind": kind.name, **fill(dict(kind.example))}


def _spec(kind: Kind, url: str) -> Any:
    return convert_kinded(_fields(kind, url), kind.spec)


def _run(body: Callable[[str], Awaitable[None]]) -> None:
    async def main() -> None:
        async with trio.open_nursery() as nursery:
            serve = functools.partial(trio.serve_tcp, _silent, 0, host="127.0.0.1")
            listeners = await nursery.start(serve)
            port = listeners[0].socket.getsockname()[1]
            await body(f"http://127.0.0.1:{port}")
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def _silent(stream: trio.SocketStream) -> None:
    """A server that takes the connection and never answers (a model that hangs)."""
    await trio.sleep_forever()
