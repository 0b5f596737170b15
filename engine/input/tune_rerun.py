"""`engine run TUNE_FILE --variant NAME`: one configuration a tuning session tried, run on its own.

A session names its variants `baseline` and `PARAM=VALUE` (`#N` when a value comes back, `+re` for
an accepted one measured afresh); the reproducer of a failing trial names one of them. Narrowed to
such names, the session becomes a plain experiment of those variants, with the same names (so each
trial keeps the seed it had in the session) and the parameters the name says: the session's starting
configuration with that one parameter changed.
"""

from __future__ import annotations

import re

import msgspec

from engine.actors.tuning import defaults, quantize
from engine.errors import InputError
from engine.events.spec import ExperimentSpec, TuneSpec, VariantSpec

BASELINE = "baseline"
VARIATION = re.compile(r"(?P<parameter>[^=]+)=(?P<value>[^#+]+)(#\d+)?(\+re)?")


def as_experiment(spec: ExperimentSpec, names: list[str], file: str) -> ExperimentSpec:
    """The session as an experiment of the named variants (the first is the baseline)."""
    assert spec.tune is not None
    start = starting_params(spec, spec.tune)
    variants = [_variant(spec.tune, start, name, file) for name in names]
    return msgspec.structs.replace(spec, kind="experiment", tune=None, variants=variants, matrix=None)


def starting_params(spec: ExperimentSpec, tune: TuneSpec) -> dict[str, object]:
    """The session's baseline: the file's params, tuned ones on their range's grid (as the session)."""
    ranges = {p.name: p for p in tune.parameters}
    start: dict[str, object] = {**spec.params}
    for name, value in defaults(tune).items():
        given = spec.params.get(name)
        if isinstance(given, int | float) and not isinstance(given, bool):
            value = quantize(ranges[name], float(given))
        start[name] = int(value) if ranges[name].integer else value
    return start


def _variant(tune: TuneSpec, start: dict[str, object], name: str, file: str) -> VariantSpec:
    if name == BASELINE:
        return VariantSpec(name=name, params=start)
    found = VARIATION.fullmatch(name)
    ranges = {p.name: p for p in tune.parameters}
    if found is None or found["parameter"] not in ranges:
        tuned = ", ".join(ranges)
        expected = f"expected 'baseline' or PARAM=VALUE of a tuned parameter ({tuned})"
        raise InputError(file, "--variant", expected)
    parameter = ranges[found["parameter"]]
    try:
        value = float(found["value"])
    except ValueError:
        raise InputError(file, "--variant", f"expected a number after {parameter.name}=") from None
    if not parameter.min <= value <= parameter.max:
        within = f"expected {parameter.name} within [{parameter.min}, {parameter.max}]"
        raise InputError(file, "--variant", within)
    number: object = int(value) if parameter.integer else value
    return VariantSpec(name=name, params={**start, parameter.name: number})
