"""Where a local Ray cluster's CPU goes during a run: its workers, its raylet and GCS, its other
daemons, and the coordinator (this process), from /proc (Linux; a remote cluster is not seen).

The cluster is the session of the GCS serving the port (`ray start` starts its processes, the
workers included, in one session). Workers that exit during a run take their CPU with them unless
reaped by a process of the session: a run's tasks reuse the same worker processes, so that is rare.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

DAEMONS = ("raylet", "gcs_server")


def _stat(pid: str) -> tuple[int, float, str] | None:
    """(session id, CPU s, name) of a process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    rest = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    return int(rest[3]), cpu, _name(argv[0].decode(errors="replace"), stat)


def _name(program: str, stat: str) -> str:
    base = os.path.basename(program.split(" ")[0])
    if base in DAEMONS:
        return base
    if program.startswith("ray::") and program not in ("ray::DashboardAgent", "ray::RuntimeEnvAgent"):
        return "workers"  # ray::IDLE, ray::run_batch_on_worker: a worker process's title
    return "other daemons"


def cluster_session(port: int) -> int | None:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if os.path.basename(argv[0]) == b"gcs_server" and f"--gcs_server_port={port}".encode() in argv:
            found = _stat(pid)
            return found[0] if found else None
    return None


@dataclass
class ClusterCpu:
    """CPU seconds per kind of process, since `start`."""

    session: int | None
    seen: dict[str, tuple[str, float]] = field(default_factory=dict)  # pid -> (name, CPU s) at start

    def snapshot(self) -> dict[str, tuple[str, float]]:
        out: dict[str, tuple[str, float]] = {}
        if self.session is None:
            return out
        for pid in filter(str.isdigit, os.listdir("/proc")):
            found = _stat(pid)
            if found and found[0] == self.session:
                out[pid] = (found[2], found[1])
        return out

    machine: float = 0.0  # the whole machine's busy CPU seconds at start
    started: int = 0  # processes of the cluster started since `start` (workers, mostly)

    def start(self) -> None:
        self.seen, self.machine = self.snapshot(), machine_busy()

    def since(self, coordinator: float) -> dict[str, float]:
        """CPU s per kind since start; "rest of the machine": what no process of the run used (other
        sessions' work, the kernel), given the coordinator's own CPU s."""
        if self.session is None:
            return {}
        spent: dict[str, float] = {}
        now = self.snapshot()
        self.started = len(set(now) - set(self.seen))
        for pid, (name, cpu) in now.items():
            spent[name] = spent.get(name, 0.0) + cpu - self.seen.get(pid, (name, 0.0))[1]
        spent["rest of the machine"] = machine_busy() - self.machine - sum(spent.values()) - coordinator
        return spent


def machine_busy() -> float:
    """Busy CPU seconds of the whole machine since boot (every CPU: /proc/stat's first line)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
