"""The host's bound Unix sockets a sandbox would still see, to cover each one.

A socket file stays connectable through a read-only mount, and a sandbox's own network namespace
does not close it: whatever listens there (a session bus, docker.sock, LXD's socket under /var/snap,
a database's under /var/lib) would answer the agent with the user's rights. The folders where such
sockets usually live are covered whole (`bwrap.socket_folders`); the rest are found in
/proc/net/unix, which lists every socket bound in this network namespace with its path, and each is
covered with an empty file. Sockets under a folder the trial is shown on purpose are spared: engine's
own relays to the host's ports and to shared services live there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

LISTED = Path("/proc/net/unix")


def visible_host_sockets(covered: Iterable[Path], shown: Iterable[Path]) -> list[Path]:
    """Bound sockets with a path that is neither under a `covered` folder (not there inside) nor under
    a `shown` one (there on purpose)."""
    try:
        lines = LISTED.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:  # no procfs: nothing to go on
        return []
    skipped = [*covered, *shown]
    found: set[Path] = set()
    for line in lines:
        fields = line.split(None, 7)  # Num RefCount Protocol Flags Type St Inode Path ("@..": abstract)
        if len(fields) < 8 or not fields[7].startswith("/") or not _is_socket(path := Path(fields[7])):
            continue
        real = path.resolve()
        if not any(real.is_relative_to(folder) for folder in skipped):
            found.add(real)
    return sorted(found)


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:  # gone since, or in a folder this user cannot enter
        return False
