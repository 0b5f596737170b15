"""Empty and missing states of the web view: an empty store says what to run (a command that runs as
printed), an unknown run, case or experiment is a 404 page with a way back, and `engine serve` on a
store that does not exist yet says so, waits, then serves it once a run creates it."""

from __future__ import annotations

import html
import shlex
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from engine.store.open import open_event_log
from tests.conftest import SAFETY_S, engine_cmd, engine_env
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("states"))


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/runs/nope", "no run 'nope'"),
        ("/runs/nope/matrix", "no run 'nope'"),
        ("/runs/r1/trial?case=nope", "no case 'nope'"),
        ("/history/no-such-experiment", "no experiment 'no-such-experiment'"),
        ("/compare?base=r1&cand=nope", "nope"),
    ],
)
def test_unknown_things_are_404_pages_with_a_way_back(store: Path, path: str, named: str) -> None:
    with serving(store) as url:
        got = httpx.get(url + path, timeout=SAFETY_S)
    assert got.status_code == 404
    assert "text/html" in got.headers["content-type"]
    assert "<h1>Not found</h1>" in got.text and named in html.unescape(got.text)
    assert 'class="way-back"><a href="/">Back to the runs</a>' in got.text


def test_an_empty_store_says_what_to_run_and_the_command_runs(tmp_path: Path) -> None:
    open_event_log(tmp_path / "st").close()
    with serving(tmp_path / "st") as url:
        page = httpx.get(url + "/", timeout=SAFETY_S).text
    assert 'id="empty-store"' in page and "holds no runs yet" in page
    command = html.unescape(page.split("<pre><code>")[1].split("</code></pre>")[0])
    argv = shlex.split(command)
    assert argv[:2] == ["engine", "run"] and argv[-2:] == ["--store", str((tmp_path / "st").resolve())]
    # as printed (the quickstart on the embedded model would be slow here: validate it, same file)
    checked = subprocess.run(engine_cmd("validate", argv[2]), env=engine_env(), capture_output=True,
                             timeout=SAFETY_S)  # fmt: skip
    assert checked.returncode == 0, checked.stderr.decode()


def test_serve_waits_for_a_store_that_does_not_exist_yet(tmp_path: Path) -> None:
    store = tmp_path / "later"
    cmd = engine_cmd("serve", "--store", str(store), "--port", "0")
    with (tmp_path / "serve.err").open("w+") as err:
        proc = subprocess.Popen(cmd, env=engine_env(), stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            assert proc.stdout is not None
            waiting = proc.stdout.readline()  # the server says it waits before anything exists
            assert waiting.startswith(f"engine serve: no store at {store} yet; waiting for it"), waiting
            assert not store.exists()
            open_event_log(store).close()  # a run creating the store
            line = proc.stdout.readline()
            assert line.startswith("engine serve: http://"), line + err.read()
            url = line.split()[2].rstrip("/")
            got = httpx.get(url + "/", timeout=SAFETY_S)
            assert got.status_code == 200 and 'id="empty-store"' in got.text
        finally:
            proc.terminate()
            proc.wait(timeout=SAFETY_S)


def test_ctrl_c_stops_the_server_with_130_and_no_traceback(tmp_path: Path) -> None:
    store = tmp_path / "st"
    open_event_log(store).close()
    cmd = engine_cmd("serve", "--store", str(store), "--port", "0")
    with (tmp_path / "serve.err").open("w+") as err:
        proc = subprocess.Popen(cmd, env=engine_env(), stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # serving (its first line is the URL)
            assert line.startswith("engine serve: http://"), line + err.read()
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=SAFETY_S) == 130
            err.seek(0)
            assert "Traceback" not in err.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=SAFETY_S)
