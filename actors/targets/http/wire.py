"""HTTP/1.1 on one connection: the socket (plain or TLS); `response` reads an answer off it.

A plain connection talks to its non-blocking socket directly: a request is one `send` and, once
the socket is readable, a local server's answer is usually one `recv`, with a single park in trio's
I/O wait between them (trio's stream layers add a conflict detector and two scheduler round trips
to each call). TLS goes through trio's SSLStream.
"""

from __future__ import annotations

import select
import socket
import ssl

import trio

from engine.events.errors import EngineError

READ_SIZE = 64 * 1024


class HttpError(EngineError):
    """A failure on the wire (the server's own error answers are responses, not these). The targets
    turn it into a TargetError of the right class; one that escaped would be an infrastructure fault."""

    exit_code = 1


class ConnectError(HttpError):
    pass


class RemoteProtocolError(HttpError):
    """The server broke HTTP/1.1 or closed the connection before its answer was complete."""


class Connection:
    """One keep-alive connection; `parked` says whether a call waited in trio's I/O (a checkpoint)."""

    def __init__(self, sock: socket.socket, stream: trio.SSLStream[trio.SocketStream] | None) -> None:
        self.sock = sock
        self.stream = stream
        self.parked = False

    async def send_all(self, data: bytes) -> None:
        if self.stream is not None:
            self.parked = True
            await self.stream.send_all(data)
            return
        view, sent = memoryview(data), 0
        while True:
            try:
                sent += self.sock.send(view[sent:])
            except BlockingIOError:
                pass
            if sent >= len(data):
                return
            self.parked = True
            await trio.lowlevel.wait_writable(self.sock)

    async def receive(self) -> bytes:
        """Some bytes, or b"" once the server has closed the connection."""
        if self.stream is not None:
            self.parked = True
            try:
                return await self.stream.receive_some(READ_SIZE)
            except trio.BrokenResourceError as exc:
                raise RemoteProtocolError(f"the connection broke: {exc.__cause__ or exc}") from exc
        while True:
            try:
                return self.sock.recv(READ_SIZE)
            except BlockingIOError:
                self.parked = True
                await trio.lowlevel.wait_readable(self.sock)

    def reusable(self) -> bool:
        """An idle connection with nothing to read: readable means the server closed it (or sent
        bytes nobody asked for), so it is not used again."""
        try:
            if self.stream is None:  # a plain socket: one non-blocking peek, no poll object per request
                self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                return False
            poller = select.poll()
            poller.register(self.sock, select.POLLIN)
            return not poller.poll(0)
        except BlockingIOError:
            return True
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        if self.sock.fileno() >= 0:
            trio.lowlevel.notify_closing(self.sock)
        self.sock.close()


async def connect(host: str, port: int, tls: ssl.SSLContext | None) -> Connection:
    try:
        stream = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise ConnectError(str(exc)) from exc
    if tls is None:  # the socket leaves trio's wrapper: this module drives it itself
        sock = socket.socket(fileno=stream.socket.detach())
        sock.setblocking(False)
        return Connection(sock, None)
    secure = trio.SSLStream(stream, tls, server_hostname=host, https_compatible=True)
    try:
        await secure.do_handshake()
    except trio.BrokenResourceError as exc:
        await trio.aclose_forcefully(stream)
        raise ConnectError(f"TLS handshake with {host}: {exc.__cause__ or exc}") from exc
    return Connection(stream.socket, secure)  # type: ignore[arg-type]  # trio's socket has fileno()
