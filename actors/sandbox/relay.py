"""network = "loopback": the host's loopback ports a sandbox may reach, relayed through Unix sockets.

The sandbox has its own network namespace (nothing of the host's is reachable from it); inside,
boot.py listens on 127.0.0.1:PORT for each listed port and passes each connection to PORT.sock in a
folder bound into the sandbox, where this side connects it to the host's 127.0.0.1:PORT. So only
the listed ports are reachable, and only on the loopback.
"""

from __future__ import annotations

import functools
import socket
from pathlib import Path

import trio

RELAY_CHUNK = 65536


async def serve_host_ports(
    ports: list[int], folder: Path, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    listeners = []
    for port in ports:
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        await sock.bind(str(folder / f"{port}.sock"))
        sock.listen(64)
        listeners.append((port, trio.SocketListener(sock)))
    async with trio.open_nursery() as nursery:
        for port, listener in listeners:
            nursery.start_soon(trio.serve_listeners, functools.partial(_relay, port), [listener])
        task_status.started()


async def _relay(port: int, inside: trio.SocketStream) -> None:
    async with inside:
        try:
            outside = await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            return  # nothing listens there on the host: the agent sees its connection closed
        async with outside, trio.open_nursery() as nursery:
            nursery.start_soon(_pump, inside, outside)
            nursery.start_soon(_pump, outside, inside)


async def _pump(source: trio.SocketStream, sink: trio.SocketStream) -> None:
    try:
        async for chunk in source:
            await sink.send_all(chunk)
        await sink.send_eof()
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
