"""Checks of a `backend = "ray"` experiment that need no cluster: Ray installed, a reachable address,
Python targets that can travel to a worker. `engine validate` and `engine run` both make them."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

from engine.errors import InputError
from engine.events.graders import GRADERS, BaseGrader
from engine.events.spec import ExperimentSpec, RaySpec
from engine.events.targets import TARGETS

INSTALL_HINT = "Ray is not installed: pip install 'engine[ray]'"
CONNECT_TIMEOUT_S = 3.0


def check_ray_experiment(
    spec: ExperimentSpec,
    file: str,
    callables: Mapping[str, Callable[..., Any]],
    targets: list[tuple[str, Any]],
) -> None:
    if spec.execution.backend != "ray":
        return
    for field, target in targets:
        named = (GRADERS if isinstance(target, BaseGrader) else TARGETS).of(target).callable_field
        if named is not None and getattr(target, named) in callables:
            raise InputError(
                file, f"{field}.{named}",
                f"{getattr(target, named)!r} is a callable registered in this process, which cannot travel "
                "to a "
                "Ray worker: name it by import path ('module:function') or use backend = \"local\"",
            )  # fmt: skip
    check_ray(spec.execution.ray, file)


def check_ray(settings: RaySpec, file: str) -> None:
    try:
        import ray  # noqa: F401 - importable, with its dependencies (find_spec would not say)
    except ImportError:
        raise InputError(file, "execution.backend", INSTALL_HINT) from None
    address = settings.address
    if address is None:
        return
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS") or address
        if address == "auto":
            return  # Ray finds this machine's cluster itself, or says there is none
    host, port = _host_port(address, file)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise InputError(
            file, "execution.ray.address", f"no Ray cluster answers at {address!r}: {exc.strerror or exc}"
        ) from None


def _host_port(address: str, file: str) -> tuple[str, int]:
    bare = address.removeprefix("ray://")
    host, _, port = bare.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(
            file, "execution.ray.address",
            f"expected \"auto\", \"host:port\" or \"ray://host:port\", got {address!r}",
        )  # fmt: skip
    return host.strip("[]"), int(port)
