"""Bit flips in a copy of a real store: every flip that changes anything a command reads is found
by `engine check` (or refused when the store opens, which check does first).

A seeded loop over positions in the live part of the data file (the same positions on every run):
for each, a fresh copy of a store holding finished runs gets one bit flipped, then `check` runs; when
check finds nothing, every read a command makes (run ids, every event, each run's index and events,
every blob an event names) must return exactly what it returned before the flip.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.store.blobs import read_blob
from engine.store.errors import StoreError
from engine.store.log.files import tree_pages
from engine.store.log.guard import decode_stored
from engine.store.log.verify import blob_refs
from engine.store.open import open_event_log
from tests.conftest import run_engine
from tests.test_store_damage import EXPERIMENT

FLIPS = int(os.environ.get("ENGINE_TEST_FLIPS", "400"))
SEED = int(os.environ.get("ENGINE_TEST_FLIP_SEED", "26"))


def everything_read(store: Path) -> Any:
    """What the commands read from a store, or the damage a read reports."""
    try:
        with open_event_log(store, readonly=True) as log:
            runs = log.run_ids()
            events = list(log.read())
            decoded = [decode_stored(log, seq, data) for seq, data in events]
            blobs = {ref: read_blob(log, ref) for event in decoded for ref in blob_refs(event)}
            per_run = {run: (log.run_index(run), list(log.read_run(run))) for run in runs}
            return runs, log.last_seq(), events, blobs, per_run
    except StoreError as exc:
        return f"damaged: {exc}"


def check_finds_damage(store: Path) -> bool:
    try:
        with open_event_log(store, readonly=True) as log:
            return bool(log.check().problems)
    except StoreError:  # refused at open: `engine check` says so too (exit 2)
        return True


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("flips")
    (folder / "exp.toml").write_text(EXPERIMENT.replace("count = 3", "count = 1"))
    for run in ("r1", "r2"):
        done = run_engine("run", "exp.toml", "--run-id", run, "-q", "--store", "st", cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder / "st"


def test_every_flip_that_changes_a_read_is_found_by_check(pristine: Path, tmp_path: Path) -> None:
    clean = everything_read(pristine)
    assert not isinstance(clean, str) and len(clean[2]) > 100 and clean[3]
    assert not check_finds_damage(pristine)
    page_size, trees = tree_pages(pristine)
    live = sorted({page for pages in trees.values() for page in pages} | {0, 1})
    chooser = random.Random(SEED)
    copy = tmp_path / "st"
    found = 0
    for _ in range(FLIPS):
        offset = chooser.choice(live) * page_size + chooser.randrange(page_size)
        bit = chooser.randrange(8)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(pristine, copy)
        with (copy / "data.mdb").open("r+b") as file:
            file.seek(offset)
            byte = file.read(1)[0]
            file.seek(offset)
            file.write(bytes([byte ^ (1 << bit)]))
        if check_finds_damage(copy):
            found += 1
        else:  # a flip check passes must change nothing read (free space in a page, unused fields)
            assert everything_read(copy) == clean, f"check missed a flip of bit {bit} at byte {offset}"
    print(f"{found} of {FLIPS} flips found by check")
    assert found > FLIPS // 4  # about half land in records, keys or page headers
