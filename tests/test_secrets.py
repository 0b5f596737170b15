"""Secrets the engine reads for a target never reach what it writes, even when a server echoes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.actors.secrets import MASK, redact, remember
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai

KEY = "sk-test-very-secret-0123456789"
AZURE = "azure-secret-abcdef987654"


def test_redact_masks_every_known_value_and_leaves_short_ones() -> None:
    remember(f"Bearer {KEY}")
    remember("1")  # too short to be a key: masking it would garble every number
    assert redact(f"got Bearer {KEY} and {KEY}!") == f"got {MASK} and {MASK}!"
    assert redact("version 1") == "version 1"


async def test_an_echoed_key_is_redacted_from_log_blobs_and_every_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.api import open_engine, spec_from_dict

    monkeypatch.setenv("FAKE_KEY", KEY)
    monkeypatch.setenv("AZURE_KEY", AZURE)
    async with open_fake_openai(faults=lambda i, body: "echo" if i % 2 == 0 else None) as server:
        target = {
            "kind": "openai", "base_url": server.base_url, "api_key_env": "FAKE_KEY", "max_retries": 0,
            "headers": {"api-key": {"env": "AZURE_KEY"}},
        }  # fmt: skip
        spec = spec_from_dict(
            {
                "name": "keys", "target": target, "execution": {"max_error_rate": 1.0},
                "cases": [{"id": f"c{i}", "prompt": "q", "expected": "42"} for i in range(6)],
            }
        )  # fmt: skip
        async with open_engine(tmp_path / "store") as eng:
            report = await eng.run(spec, run_id="r1")
    assert server.requests[0].headers["api-key"] == AZURE  # the server did get (and echo) both secrets
    assert report.variants[0].errors == 3
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir())
    assert b"bad credentials" in stored and MASK.encode() in stored
    written = [stored]
    for fmt in ("jsonl", "junit"):
        done = run_engine("export", "r1", "--store", "store", "-f", fmt, cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()
        written.append(done.stdout)
    rundir = run_engine("export", "r1", "--store", "store", "-f", "rundir", "-o", "rd", cwd=tmp_path)
    assert rundir.returncode == 0, rundir.stderr.decode()
    written += [p.read_bytes() for p in (tmp_path / "rd").rglob("*") if p.is_file()]
    for data in written:
        assert KEY.encode() not in data and AZURE.encode() not in data
    assert any(b"bad credentials" in data for data in written[1:])
