"""Imports that never damage a store: a bundle whose checksum is right but whose content is crafted
(another run's id in the header, a blob missing or edited, an event that does not decode or is not
what its row says, a hostile run id) is refused whole, in one line, before anything is written; any
import that exits 0 leaves `engine check` at 0. A zlib bomb is refused with bounded memory."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import UserError
from engine.events.codec import decode, encode
from engine.runtime.bundle_import import import_bundle
from engine.store.bundle_format import MAGIC, BlobRow, Bundle, EventRow, read_bundle, write_bundle
from engine.store.open import open_event_log
from tests.conftest import engine_cmd, engine_env, run_engine
from tests.test_bundles import bundled  # noqa: F401 -- the fixture: a real run's bundle

HOSTILE_IDS = ["../../x", "a\nb", "a\x00b", "\x1b[31mred", "<script>alert(1)</script>", "", "r" * 600]


def rewrite(bundle: Bundle, path: Path) -> Path:
    """The bundle written again: a valid checksum over whatever it now holds (as a crafter would)."""
    with path.open("wb") as out:
        write_bundle(out, bundle.header, bundle.events, bundle.blobs)
    return path


def loaded(path: Path) -> Bundle:
    with path.open("rb") as handle:
        return read_bundle(handle, str(path))


def with_run_id(bundle: Bundle, run_id: str, header_too: bool = True) -> Bundle:
    events = [
        EventRow(r.seq, r.tag, encode(msgspec.structs.replace(decode(r.data), run_id=run_id)))
        for r in bundle.events
    ]
    header = msgspec.structs.replace(bundle.header, run_id=run_id, events_digest="")
    return Bundle(header=header if header_too else bundle.header, events=events, blobs=bundle.blobs)


def crafted(bundle: Bundle, how: str) -> Bundle:
    header, events, blobs = bundle.header, list(bundle.events), list(bundle.blobs)
    if how == "header names another run":
        header = msgspec.structs.replace(header, run_id="someone-else", events_digest="")
    elif how == "blob missing":
        named = {decode(r.data).output_hash for r in events if r.tag == "trial.completed"}
        blobs = [b for b in blobs if b.key not in named][:-1] or blobs[:-1]
    elif how == "blob edited":
        blobs[0] = BlobRow(blobs[0].key, blobs[0].data + b" (edited)")
    elif how == "event does not decode":
        events[3] = EventRow(events[3].seq, events[3].tag, b"\xc1 not msgpack")
    elif how == "event is not its tag":
        events[3] = EventRow(events[3].seq, "run.cancelled", events[3].data)
    elif how == "events do not match the digest":
        events = events[:-1]
    return Bundle(header=header, events=events, blobs=blobs)


CRAFTS = ["header names another run", "blob missing", "blob edited", "event does not decode",
          "event is not its tag", "events do not match the digest"]  # fmt: skip


def check_exit(tmp_path: Path, store: str) -> int:
    return run_engine("check", "--store", store, cwd=tmp_path).returncode


@pytest.mark.parametrize("how", CRAFTS)
def test_a_crafted_bundle_is_refused_whole_and_the_store_stays_sound(
    tmp_path: Path, bundled: Path, how: str  # noqa: F811
) -> None:
    bad = rewrite(crafted(loaded(bundled), how), tmp_path / "crafted.bundle")
    refused = run_engine("import", str(bad), "--store", "dest", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "refused, nothing imported" in err and "Traceback" not in err
    assert run_engine("import", str(bundled), "--store", "dest", cwd=tmp_path).returncode == 0
    with open_event_log(tmp_path / "dest") as log:
        assert log.run_ids() == ["b1"]
    assert check_exit(tmp_path, "dest") == 0


@pytest.mark.parametrize("run_id", HOSTILE_IDS)
def test_a_hostile_run_id_never_enters_the_store(tmp_path: Path, bundled: Path, run_id: str) -> None:  # noqa: F811
    bad = rewrite(with_run_id(loaded(bundled), run_id), tmp_path / "hostile.bundle")
    refused = run_engine("import", str(bad), "--store", "dest", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "run_id" in err and "--as NEW_ID" in err and "damaged" not in err
    renamed = run_engine("import", str(bad), "--as", "safe-id", "--store", "dest", cwd=tmp_path)
    assert renamed.returncode == 0, renamed.stderr.decode()
    with open_event_log(tmp_path / "dest") as log:
        assert log.run_ids() == ["safe-id"]
    assert check_exit(tmp_path, "dest") == 0


MUTATIONS = st.lists(
    st.tuples(st.sampled_from(["drop event", "drop blob", "swap tags", "dup event", "edit blob", "foreign"]),
              st.integers(0, 10_000)),
    min_size=1, max_size=3,
)  # fmt: skip


def mutate(bundle: Bundle, steps: list[tuple[str, int]]) -> Bundle:
    events, blobs = list(bundle.events), list(bundle.blobs)
    for how, at in steps:
        i, j = at % len(events), at % max(1, len(blobs))
        if how == "drop event" and len(events) > 1:
            events.pop(i)
        elif how == "drop blob" and blobs:
            blobs.pop(j)
        elif how == "swap tags":
            a, b = events[i], events[(i + 1) % len(events)]
            events[i] = EventRow(a.seq, b.tag, a.data)
        elif how == "dup event":
            events.insert(i, events[i])
        elif how == "edit blob" and blobs:
            blobs[j] = BlobRow(blobs[j].key, blobs[j].data[::-1] + b"x")
        elif how == "foreign":
            other = msgspec.structs.replace(decode(events[i].data), run_id="foreign")
            events[i] = EventRow(events[i].seq, events[i].tag, encode(other))
    return Bundle(header=bundle.header, events=events, blobs=blobs)


@pytest.fixture
def source_bundle(bundled: Path) -> Bundle:  # noqa: F811
    return loaded(bundled)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=MUTATIONS)
def test_any_import_that_succeeds_leaves_check_clean(
    tmp_path: Path, source_bundle: Bundle, steps: Any
) -> None:
    bundle = mutate(source_bundle, steps)
    store = tmp_path / f"store-{abs(hash(str(steps)))}"
    with open_event_log(store) as log:
        try:
            import_bundle(log, bundle, "mutated.bundle")
        except UserError as exc:
            assert "refused, nothing imported" in str(exc)
            assert log.run_ids() == []
            return
        assert log.check().problems == []


def bomb(path: Path, megabytes: int = 400) -> Path:
    """A real bundle's shape (magic, a frame, a checksum) whose one frame inflates to `megabytes`."""
    packer = zlib.compressobj(9)
    zeros = bytes(1 << 20)
    body = b"".join(packer.compress(zeros) for _ in range(megabytes)) + packer.flush()
    data = MAGIC + len(body).to_bytes(4, "big") + body
    path.write_bytes(data + b"SHA256" + hashlib.sha256(data).digest())
    return path


PEAK_RSS = """import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
sys.stdout.write(f"{done.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
sys.stdout.write(done.stderr.decode())"""


@pytest.mark.parametrize("command", [["import", "{file}", "--store", "st"], ["report", "{file}"],
                                     ["replay", "{file}", "--json"]])  # fmt: skip
def test_a_zlib_bomb_is_refused_with_bounded_memory(tmp_path: Path, command: list[str]) -> None:
    file = bomb(tmp_path / "bomb.bundle")
    assert file.stat().st_size < 500_000
    args = engine_cmd(*(part.replace("{file}", str(file)) for part in command))
    out = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], capture_output=True, text=True,
                         cwd=tmp_path, env=engine_env(), timeout=300)  # fmt: skip
    first, *err = out.stdout.splitlines()
    code, peak_kib = (int(x) for x in first.split())
    assert code == 2 and len(err) == 1 and "refused: a frame holds over 32 MiB" in err[0], out.stdout
    assert peak_kib < 100 * 1024, f"peak {peak_kib} KiB"


def test_a_frame_over_the_cap_is_never_written(tmp_path: Path) -> None:
    header = loaded_header()
    big = BlobRow("k" * 64, bytes(40 << 20))
    with pytest.raises(Exception, match="over what a bundle frame holds"):
        write_bundle(io.BytesIO(), header, [], [big])
    many = [BlobRow(f"{i:064d}", bytes(3 << 20)) for i in range(8)]  # 24 MiB: split into frames
    out = io.BytesIO()
    write_bundle(out, header, [], many)
    out.seek(0)
    assert len(read_bundle(out, "split.bundle").blobs) == 8


def loaded_header() -> Any:
    from engine.store.bundle_format import BundleHeader

    return BundleHeader(format=1, run_id="r")


def test_the_caps_are_documented() -> None:
    text = (Path(__file__).parent.parent / "docs" / "bundle-format.md").read_text()
    assert "## Caps" in text and "32 MiB" in text and "8 MiB" in text
