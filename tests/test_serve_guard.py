"""`engine serve` locked down, over real HTTP against the real server: the Host allow-list (DNS
rebinding), the security headers on every response, where a token comes from and which are refused,
exact run ids."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import pytest

from tests.conftest import SAFETY_S, run_engine
from tests.serve_helpers import make_store, serving

TOKEN = "a-long-enough-token-1234"
POLICY_PARTS = ("default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("guard"))


def get(url: str, path: str, host: str | None = None, **headers: str) -> httpx.Response:
    if host is not None:
        headers["Host"] = host
    return httpx.get(url + path, headers=headers, timeout=SAFETY_S)


def test_only_loopback_names_are_answered_by_default(store: Path) -> None:
    with serving(store) as url:
        port = url.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST", "127.0.0.1"):
            assert get(url, "/api/runs", host).status_code == 200, host
        smuggled = (f"127.0.0.1:{port}@evil.example", "localhost:1 evil.example", "127.0.0.1/x", "[::1")
        named = ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "[::2]:1", "")
        for host in (*named, *smuggled):
            refused = get(url, "/api/runs", host)
            assert refused.status_code == 400, host
            assert "--allow-host" in refused.json()["error"]
            assert get(url, "/", host).status_code == 400  # pages and static files too
            assert get(url, "/static/app.js", host).status_code == 400


def test_allow_host_adds_names(store: Path) -> None:
    with serving(store, "--allow-host", "view.example", "--allow-host", "Box.LAN") as url:
        assert get(url, "/api/runs", "view.example:8765").status_code == 200
        assert get(url, "/api/runs", "box.lan").status_code == 200
        assert get(url, "/api/runs", "localhost").status_code == 200
        assert get(url, "/api/runs", "evil.example").status_code == 400


def test_every_response_carries_the_security_headers(store: Path) -> None:
    with serving(store, "--token", TOKEN) as url:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        responses = {
            "page": get(url, "/runs/r1", **auth), "api": get(url, "/api/runs", **auth),
            "static": get(url, "/static/app.js", **auth), "missing": get(url, "/api/runs/nope", **auth),
            "no token": get(url, "/api/runs"), "bad host": get(url, "/", "evil.example"),
        }  # fmt: skip
        statuses = {name: r.status_code for name, r in responses.items()}
        assert statuses == {"page": 200, "api": 200, "static": 200, "missing": 404, "no token": 401,
                            "bad host": 400}  # fmt: skip
        for name, response in responses.items():
            policy = response.headers.get("content-security-policy", "")
            assert all(part in policy for part in POLICY_PARTS), name
            assert response.headers["x-content-type-options"] == "nosniff", name
            assert response.headers["x-frame-options"] == "DENY", name
            assert response.headers["referrer-policy"] == "no-referrer", name
        page = responses["page"].text
        # the policy allows no inline script or style: the pages have none
        assert not re.search(r"<script(?![^>]*\bsrc=)", page)
        assert not re.search(r"<style|\sstyle=|\son\w+=", page)


def test_the_token_comes_from_a_file_or_the_environment(store: Path, tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text(TOKEN + "\n")
    for args, env in ((("--token-file", str(file)), {}), ((), {"ENGINE_SERVE_TOKEN": TOKEN})):
        with serving(store, *args, **env) as url:
            assert get(url, "/api/runs").status_code == 401
            assert get(url, "/api/runs", Authorization=f"Bearer {TOKEN}").status_code == 200


@pytest.mark.parametrize(
    ("args", "env", "field"),
    [
        (("--token", " "), {}, "--token"),
        (("--token", "short-token"), {}, "--token"),
        (("--token", "sixteen chars ok"), {}, "--token"),  # a space
        ((), {"ENGINE_SERVE_TOKEN": ""}, "ENGINE_SERVE_TOKEN"),
        (("--token-file", "EMPTY"), {}, "--token-file"),
        (("--token-file", "MISSING"), {}, "--token-file"),
        (("--token", TOKEN, "--token-file", "EMPTY"), {}, "--token-file"),
        (("--host", "0.0.0.0", "--token", TOKEN), {}, "--allow-host"),
        (("--host", "0.0.0.0"), {}, "--token"),
    ],
)
def test_blank_short_or_missing_tokens_and_unnamed_wildcard_binds_are_refused(
    store: Path, tmp_path: Path, args: tuple[str, ...], env: dict[str, str], field: str
) -> None:
    (tmp_path / "EMPTY").write_text("\n")
    args = tuple(str(tmp_path / a) if a in ("EMPTY", "MISSING") else a for a in args)
    done = run_engine("serve", "--store", str(store), "--port", "0", *args, cwd=tmp_path, **env)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f": {field}: expected" in err, err


def test_a_wildcard_bind_answers_the_names_it_is_given(store: Path) -> None:
    with serving(store, "--host", "0.0.0.0", "--allow-host", "box.lan", ENGINE_SERVE_TOKEN=TOKEN) as url:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert url.startswith("http://0.0.0.0:")
        assert get(url, "/api/runs", **auth).status_code == 200  # the printed URL works as printed
        assert get(url, "/api/runs", "box.lan", **auth).status_code == 200
        assert get(url, "/api/runs", "evil.example", **auth).status_code == 400


def test_run_ids_are_exact_on_every_route(store: Path) -> None:
    with serving(store) as url:
        assert get(url, "/api/runs/r1").status_code == 200
        for path in ("/api/runs/r", "/api/runs/r/trials", "/api/runs/r/matrix", "/api/runs/r/progress",
                     "/api/compare?base=r&cand=r2", "/runs/r", "/compare?base=r1&cand=r"):  # fmt: skip
            response = get(url, path)
            assert response.status_code == 404, path
            assert "no run 'r'" in html.unescape(response.text), path
