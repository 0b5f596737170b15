"""Every format engine writes a run in, by name, in one registry: report formats (a function from the
typed report to text: `engine report --format NAME`) and export formats (a function writing a run's
trials: `engine export --format NAME`).

A new built-in format is a module plus its line here. Another package adds a report format with an
entry point in the `engine.formats` group naming such a function:

    [project.entry-points."engine.formats"]
    csv = "mypackage.report_csv:report_csv"

Entry points are listed only when a format name is looked up, and a format's module is imported only
when it is used, so `engine --help` pays for none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine.errors import InputError
from engine.events.plugin_loader import load_reference, offered
from engine.events.report import RunReport
from engine.store.contract import EventStore

Kind = Literal["report", "export"]
ENTRY_POINT_GROUP = "engine.formats"


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    kind: Kind
    target: str  # module:attribute
    origin: str = "engine"  # or the distribution that declared the entry point


BUILT_IN = [
    Format("markdown", "report", "engine.presentation.markdown:report_markdown"),
    Format("html", "report", "engine.presentation.html_file:report_html"),
    Format("json", "report", "engine.presentation.formats:report_json"),  # (the CLI prints the stored bytes)
    Format("jsonl", "export", "engine.views.export.jsonl:write"),
    Format("junit", "export", "engine.views.export.junit:write"),
    Format("rundir", "export", "engine.views.export.rundir:write"),
    Format("bundle", "export", "engine.views.export.bundle:write"),
]


class Formats:
    """The registry: built-in formats, then (on first lookup) the `engine.formats` entry points."""

    def __init__(self, built_in: list[Format]) -> None:
        self._formats = {f.name: f for f in built_in}
        self._plugins_read = False
        self._loaded: dict[str, Any] = {}

    def _all(self) -> dict[str, Format]:
        if not self._plugins_read:
            self._plugins_read = True
            for point in offered(ENTRY_POINT_GROUP):
                if point.name not in self._formats:  # a built-in name is never replaced
                    self._formats[point.name] = Format(point.name, "report", point.reference, point.origin)
        return self._formats

    def names(self, kind: Kind) -> list[str]:
        return [name for name, f in self._all().items() if f.kind == kind]

    def choices(self, kind: Kind) -> str:
        """The names a `--format` option's help lists: engine's own, then the installed packages'."""
        return " | ".join(self.names(kind))

    def has(self, name: str, kind: Kind) -> bool:
        found = self._all().get(name)
        return found is not None and found.kind == kind

    def get(self, name: str, kind: Kind) -> Any:
        found = self._all().get(name)
        if found is None or found.kind != kind:
            raise KeyError(f"no {kind} format named {name!r} (known: {', '.join(self.names(kind))})")
        if name not in self._loaded:
            self._loaded[name] = load_reference(found.target)
        return self._loaded[name]


FORMATS = Formats(BUILT_IN)


def report_json(report: RunReport) -> str:
    import msgspec

    return msgspec.json.encode(report).decode() + "\n"


def render_report(name: str, report: RunReport, **extra: object) -> str:
    """The report in format `name`; `extra` (the HTML file's matrix) is for the formats that take it."""
    if not FORMATS.has(name, "report"):
        raise InputError("engine report", "--format", f"one of {', '.join(FORMATS.names('report'))}")
    render: Callable[..., str] = FORMATS.get(name, "report")
    return render(report, **extra)


Write = Callable[[str], object]


def export_run(log: EventStore, run_id: str, fmt: str, out: Path | str | None, stdout: Write) -> int:
    """Export a run; returns the number of trials written. rundir writes a directory (--out)."""
    from engine.store.projections.trials import load_trials

    if not FORMATS.has(fmt, "export"):
        expected = f"expected one of {', '.join(FORMATS.names('export'))}, got {fmt!r}"
        raise InputError("engine export", "--format", expected)
    writer = FORMATS.get(fmt, "export")
    if fmt == "bundle":  # the whole run, not its trials: events and blobs (--out: a file or URL)
        if out is None:
            raise InputError("engine export", "--out", "expected a file (or URL) for --format bundle")
        return writer(log, run_id, out)
    out = None if out is None else Path(out)
    run = load_trials(log, run_id)
    if fmt == "rundir":
        if out is None:
            raise InputError("engine export", "--out", "expected a directory for --format rundir")
        return writer(log, run, out)
    if out is None:
        return writer(log, run, stdout)
    with out.open("w", encoding="utf-8") as file:
        return writer(log, run, file.write)
