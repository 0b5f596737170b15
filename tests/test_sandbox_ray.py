"""A sandboxed agent on a Ray worker is sandboxed there. Marker `ray`: run by .ci/run. (What a worker
without bubblewrap answers the run's probe is tested without Ray: tests/test_sandbox_probe.py.)"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_engine
from tests.ray_cluster import local_cluster
from tests.test_sandbox import sandbox  # noqa: F401 - the fixture: skipped (or failed in CI) without bwrap

pytestmark = pytest.mark.ray

AGENT = "touch /usr/engine-escape 2>/dev/null && echo escaped || echo contained"


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", os.environ.get("RAY_AUTH_MODE", "disabled"))
        with local_cluster(num_cpus=2) as address:
            yield address


def experiment(address: str, runtime_env: str = "{}") -> str:
    return (
        f'name = "ray-sandbox"\n[target]\nkind = "command"\ncommand = "{AGENT}"\nsandbox = "bubblewrap"\n'
        f'[execution]\nbackend = "ray"\nray = {{ address = "{address}", runtime_env = {runtime_env} }}\n'
        '[[cases]]\nid = "c"\nprompt = "p"\nexpected = "contained"\n'
    )


def test_a_sandboxed_agent_is_contained_on_the_worker(
    sandbox: None, tmp_path: Path, ray_address: str  # noqa: F811
) -> None:
    (tmp_path / "exp.toml").write_text(experiment(ray_address))
    done = run_engine("run", "exp.toml", "--store", "st", "--run-id", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(run_engine("report", "r", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert report["variants"][0]["pass_rate"] == 1.0  # "contained": /usr is read-only on the worker too
