"""A `backend = "ray"` experiment that cannot run is refused before its first event: one line naming
the file and field, exit 2, nothing logged. None of these needs a Ray cluster (default suite)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from engine import open_engine, spec_from_dict
from engine.errors import InputError
from engine.store.memory import MemoryStore
from tests.conftest import engine_env, run_engine

AGENT = 'command = ["python3", "-c", "print(1)"]'


def experiment(ray_table: str, target: str = f'kind = "command"\n{AGENT}') -> str:
    return (
        f'name = "ray-config"\n[target]\n{target}\n[execution]\nbackend = "ray"\nray = {ray_table}\n'
        '[[cases]]\nid = "c"\nprompt = "p"\nexpected = "1"\n'
    )


def closed_port() -> int:
    """A port nothing listens on (bound then released: connecting to it is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_refused(tmp_path: Path, field: str, *args: str) -> str:
    done = run_engine("run", "exp.toml", "--store", "st", *args, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert f"exp.toml: {field}:" in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    listed = run_engine("list", "--json", "--store", "st", cwd=tmp_path)
    assert listed.stdout.strip() in (b"", b"[]"), listed.stdout  # nothing logged
    return err


def test_an_address_where_no_cluster_answers_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    (tmp_path / "exp.toml").write_text(experiment(f'{{ address = "127.0.0.1:{closed_port()}" }}'))
    err = assert_refused(tmp_path, "execution.ray.address")
    assert "no Ray cluster answers" in err


def test_an_address_that_is_not_host_and_port_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    (tmp_path / "exp.toml").write_text(experiment('{ address = "ray://nowhere" }'))
    err = assert_refused(tmp_path, "execution.ray.address")
    assert '"ray://host:port"' in err


def test_ray_not_installed_is_refused_with_the_extra_to_install(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "exp.toml").write_text(experiment("{}"))
    # `import ray` fails in this process as it does where Ray is not installed (None in sys.modules)
    main = "import sys; sys.modules['ray'] = None; from engine.cli.main import main; sys.exit(main())"
    argv = [sys.executable, "-c", main, "run", "exp.toml", "--store", "st"]
    done = subprocess.run(argv, cwd=tmp_path, env=engine_env(), capture_output=True, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "exp.toml: execution.backend: Ray is not installed: pip install 'engine[ray]'" in err, err
    assert "Traceback" not in err


def test_a_validate_names_the_same_problem(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    (tmp_path / "exp.toml").write_text(experiment(f'{{ address = "127.0.0.1:{closed_port()}" }}'))
    done = run_engine("validate", "exp.toml", cwd=tmp_path)
    assert done.returncode == 2 and b"execution.ray.address" in done.stderr, done.stderr


async def test_an_in_process_callable_cannot_travel_to_ray_workers() -> None:
    def my_agent(prompt: str) -> str:
        return prompt

    spec = spec_from_dict(
        {
            "name": "embedded",
            "target": {"kind": "python", "callable": "my_agent"},
            "execution": {"backend": "ray"},
            "cases": [{"id": "c", "prompt": "p", "expected": "p"}],
        }
    )
    async with open_engine(MemoryStore(), callables={"my_agent": my_agent}) as eng:
        with pytest.raises(InputError, match=r"target.callable: 'my_agent' is a callable registered in"):
            await eng.run(spec)
        assert eng.runs() == []  # refused before its first event


def test_the_backend_field_takes_local_or_ray(tmp_path: Path) -> None:
    text = experiment("{}").replace('backend = "ray"', 'backend = "dask"')
    (tmp_path / "exp.toml").write_text(text)
    done = run_engine("validate", "exp.toml", cwd=tmp_path)
    assert done.returncode == 2 and b"execution.backend" in done.stderr, done.stderr


def test_the_cluster_example_validates() -> None:
    pytest.importorskip("ray")
    example = Path(__file__).resolve().parent.parent / "examples" / "cluster.toml"
    done = run_engine("validate", str(example), cwd=example.parent)
    assert done.returncode == 0, done.stderr.decode()
