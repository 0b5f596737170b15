"""A mark saying the data file, as it is now, was found whole: the next open need not walk every page.

Walking every B-tree page before LMDB maps the file (see `store.log.files`) costs reading the whole
file: 1.3 GB and ~1 s for a 1M-trial store, before `engine run` starts its first trial. The pages
only change in two ways: LMDB commits (which write sound pages, from a sound file), and anything else
(an edit, a bit flip, a zeroed or truncated copy). So the walk is needed once per state LMDB did not
write, and the mark records the state that was last walked or last committed by engine:

- what LMDB says of it: the newest meta's transaction id, and a digest of the first pages (the meta
  pages, which every commit rewrites);
- what the file system says of it: device, inode, size, mtime and ctime (nanoseconds). Any write
  that is not LMDB's own changes ctime (a copy is a new inode; `touch -d` sets ctime to now), so the
  mark no longer matches and the next open walks again. (Linux 6.13+ gives a write after a stat a
  ctime of its own on ext4, xfs, btrfs and tmpfs; older kernels keep one clock tick, a few ms, in
  which a write right after engine's close could keep the ctime it recorded.)

A writer records the mark after its open-time walk, and when it closes if the last commit was an
engine writer's (`store.log.kept_io.fresh`). A reader records it once it has walked every tree
(`engine check` does) of a file still as it was when the reader opened it, where it may write: a
copied or restored store is walked once, not by every read until a run opens it. The mark lives
beside the data file (`validated`): it travels with a copy of the folder, which then has another
inode and walks.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from engine.store.errors import StoreDamagedError
from engine.store.log.files import newest_meta
from engine.store.log.records import crc32c

MARK = "validated"
HEAD = 2 * 65536  # as much as `files` reads for the meta pages (their size is not known before)


def state_now(store: Path) -> str | None:
    """The data file's state as one line; None if it is absent or its meta pages are damaged."""
    data = store / "data.mdb"
    try:
        with data.open("rb") as file:
            meta = newest_meta(file, data)
            head = os.pread(file.fileno(), HEAD, 0)
            st = os.fstat(file.fileno())
    except (OSError, StoreDamagedError):
        return None
    digest = f"{crc32c(head):08x}"  # the meta pages changed (no OpenSSL import: `engine list` stays lean)
    fields = (meta.txnid, digest, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return " ".join(map(str, fields))


def marked_whole(store: Path, state: str | None) -> bool:
    """Whether the data file, in `state` (see `state_now`), is as last walked or committed by engine."""
    if state is None:
        return False
    try:
        mark = (store / MARK).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return False
    return mark.strip() == state


def txnid_of(state: str) -> int:
    return int(state.split(" ", 1)[0])


def mark_whole(store: Path, state: str | None) -> None:
    """Record `state` (taken before a walk that found the file whole, or after engine's commit) as
    whole, if the file is still in it: a change since is left to the next open's walk."""
    if state is None or state_now(store) != state:
        return
    temporary = store / f"{MARK}.{os.getpid()}"
    try:
        temporary.write_text(state + "\n", encoding="ascii")
        os.replace(temporary, store / MARK)
    except OSError:  # a read-only folder, a full disk: the next open walks, as it would have
        with contextlib.suppress(OSError):  # on a read-only mount the unlink fails too (EROFS)
            temporary.unlink(missing_ok=True)
