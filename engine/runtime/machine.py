"""The machine a run executes on, recorded with its start: CPU model and cores.

Latency depends on the runner as much as on the code: a shared CI pool hands out machines of other
speeds, so `engine compare` compares latency between runs of one machine only, unless asked. The
model is read from /proc/cpuinfo (Linux), else the platform's processor name. ENGINE_MACHINE names
the machine instead, for runner classes whose CPUs read the same but differ (VM sizes, throttling).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def this_machine() -> tuple[str, int]:
    """(CPU model, logical cores) of this machine."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
    named = os.environ.get("ENGINE_MACHINE", "").strip()
    return (named or _cpu_model() or platform.machine() or "unknown"), cores


def _cpu_model() -> str:
    try:
        text = CPUINFO.read_text(errors="replace")
    except OSError:
        return platform.processor()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
            return " ".join(value.split())
    return platform.processor()
