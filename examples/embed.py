"""Embed engine in your own Trio program: a Python callable as the subject, events as they happen.

python examples/embed.py
"""

from __future__ import annotations

import tempfile

import trio

from engine import TargetRequest, TrialGraded, open_engine, spec_from_dict


async def my_agent(request: TargetRequest) -> str:
    """The app under test. Variant flags and parameters arrive with the request."""
    await trio.sleep(0.001)
    if request.flags.get("use_lookup"):
        return {"fr": "Paris", "jp": "Tokyo", "it": "Rome"}.get(request.case.id, "I don't know")
    return "Paris"


SPEC = spec_from_dict(
    {
        "name": "lookup-flag",
        "target": {"kind": "python", "callable": "my_agent"},
        "variants": [{"name": "baseline"}, {"name": "lookup", "flags": {"use_lookup": True}}],
        "cases": [
            {"id": "fr", "prompt": "Capital of France?", "expected": "Paris"},
            {"id": "jp", "prompt": "Capital of Japan?", "expected": "Tokyo"},
            {"id": "it", "prompt": "Capital of Italy?", "expected": "Rome"},
        ],
        "repeat": {"count": 2},
    }
)


async def main() -> None:
    async with open_engine(tempfile.mkdtemp(), callables={"my_agent": my_agent}) as eng:
        handle = eng.start(SPEC, events=True)
        async for event in handle.events():
            if isinstance(event, TrialGraded):
                verdict = "pass" if event.passed else "fail"
                print(f"{event.variant:>8} {event.case} #{event.repeat + 1}: {verdict}")
        report = await handle.result()
        for variant in report.variants:
            print(f"{variant.name}: pass rate {variant.pass_rate}")
        print(f"winner: {report.winner} (significant: {report.winner_significant})")


if __name__ == "__main__":
    trio.run(main)
