"""What every target and grader kind must do, as checks a test suite runs (engine's over every
registered kind, a plugin author's over theirs):

    from engine.actors.kind_contract import check_grader_kind, check_target_kind
    def test_my_grader(): check_grader_kind(MY_GRADER)

An async test suite (pytest-trio, already inside trio.run) awaits the same checks:
`await acheck_grader_kind(MY_GRADER)`, `await acheck_target_kind(MY_TARGET)`.

Each check raises AssertionError saying what the kind did wrong. A kind's `example` fields build the
spec checked; "{url}" in them is the address of a server that accepts and never answers, so a kind
that calls a model shows how it behaves when the model hangs. Cancellation comes once every task
waits (trio.testing.wait_all_tasks_blocked), and a timeout is accepted as well as an answer, so no
check races the clock.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import msgspec
import trio
import trio.testing

from engine.actors.graders.factory import GraderContext, make_grader
from engine.actors.graders.grader_protocol import Submission
from engine.actors.targets.target_maker import target_maker
from engine.actors.targets.target_protocol import TargetError, TargetRequest, TargetResponse
from engine.events import codec
from engine.events import kinds as k
from engine.events.graders import GraderKind
from engine.events.kind_convert import convert_kinded
from engine.events.kind_registry import Kind
from engine.events.spec import CaseSpec, ExperimentSpec, VariantSpec, fingerprint
from engine.events.targets import TargetKind

PATIENCE_S = 300.0  # a hang guard only: no check waits on time to decide what happened
TIMEOUT_S = 0.05  # a target's own timeout: against the server that never answers, it times out
CASE = CaseSpec(id="c1", prompt="Say hello.", expected="hello")
WRONG = [[{"not": "a value"}]]  # what no field of a spec takes


def check_grader_kind(kind: GraderKind) -> None:
    trio.run(acheck_grader_kind, kind)


def check_target_kind(kind: TargetKind) -> None:
    trio.run(acheck_target_kind, kind)


async def acheck_grader_kind(kind: GraderKind) -> None:
    """check_grader_kind, awaited from a test that already runs in trio (pytest-trio's)."""
    check_round_trip(kind, _spec(kind, "http://127.0.0.1:9"))
    check_field_errors(kind)
    if not kind.pairwise:  # a pairwise judge is given pairs once every trial has run, not one output
        await _against_a_silent_server(functools.partial(_grader_behaviour, kind))


async def acheck_target_kind(kind: TargetKind) -> None:
    """check_target_kind, awaited from a test that already runs in trio (pytest-trio's)."""
    check_round_trip(kind, _spec(kind, "http://127.0.0.1:9"))
    check_field_errors(kind)
    await _against_a_silent_server(functools.partial(_target_behaviour, kind))


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
    grader = make_grader(_spec(kind, url), GraderContext(make_target=target_maker()))
    submission = Submission(case=CASE, output="hello", variant=VariantSpec(name="v"), exit_code=0)
    await _cancelled(kind, lambda: grader.grade(submission))
    with _in_time(kind, "grade()"):
        found = await grader.grade(submission)
    assert isinstance(found, k.GraderResult), f"{kind.name}: grade() returned {found!r}, not a GraderResult"
    await grader.aclose()


async def _target_behaviour(kind: TargetKind, url: str) -> None:
    target = target_maker()(msgspec.structs.replace(_spec(kind, url), timeout_s=TIMEOUT_S))
    variant, prompt = VariantSpec(name="v"), CASE.prompt
    request = TargetRequest(run_id="r", variant=variant, case=CASE, repeat=0, prompt=prompt)
    request = msgspec.structs.replace(request, timeout_s=TIMEOUT_S)
    await _cancelled(kind, lambda: target.call(request))
    try:
        with _in_time(kind, f"call() with timeout_s = {TIMEOUT_S}"):
            found = await target.call(request)
        assert isinstance(found, TargetResponse), f"{kind.name}: call() returned {found!r}"
    except TargetError as exc:  # its own timeout, or the example's failure (a callable that refuses)
        assert exc.kind in ("timeout", "infra", "model", "config"), f"{kind.name}: error kind {exc.kind!r}"
    await target.aclose()


@contextlib.contextmanager
def _in_time(kind: Kind, what: str) -> Iterator[None]:
    """A hang guard only: a call ends by itself, its own timeout included, long before this."""
    try:
        with trio.fail_after(PATIENCE_S):
            yield
    except trio.TooSlowError:
        raise AssertionError(f"{kind.name}: {what} still ran after {PATIENCE_S:g} s (a hang)") from None


async def _cancelled(kind: Kind, call: Callable[[], Awaitable[Any]]) -> None:
    """Cancelled before it starts, and cancelled once it waits (on a model, a process...), a call
    ends as cancelled (or done, if it never waited): the cancellation never becomes a failure of the
    call, which would be logged as the trial's."""
    for at_once in (True, False):
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                if at_once:
                    scope.cancel()
                else:
                    nursery.start_soon(_cancel_when_blocked, scope)
                try:
                    await call()
                except TargetError as exc:
                    if isinstance(exc.__context__, trio.Cancelled):
                        raise AssertionError(f"{kind.name}: a cancelled call raised {exc!r}") from None


async def _cancel_when_blocked(scope: trio.CancelScope) -> None:
    await trio.testing.wait_all_tasks_blocked()
    scope.cancel()


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


async def _against_a_silent_server(body: Callable[[str], Awaitable[None]]) -> None:
    try:
        async with trio.open_nursery() as nursery:
            serve = functools.partial(trio.serve_tcp, _silent, 0, host="127.0.0.1")
            listeners = await nursery.start(serve)
            port = listeners[0].socket.getsockname()[1]
            await body(f"http://127.0.0.1:{port}")
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # the nursery's: say the check's own failure
        found: BaseException = group
        while isinstance(found, BaseExceptionGroup) and len(found.exceptions) == 1:
            found = found.exceptions[0]
        raise found from None


async def _silent(stream: trio.SocketStream) -> None:
    """A server that takes the connection and never answers (a model that hangs)."""
    await trio.sleep_forever()
