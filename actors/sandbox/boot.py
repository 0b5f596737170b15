"""Runs inside a sandbox before the agent (a standalone script: stdlib only, nothing of engine).

    python boot.py PLAN.json -- AGENT ARGV...     a trial's sandbox
    python boot.py PLAN.json --serve              a shared workspace's services sandbox

Starts the plan's services (their output to LOGS/<name>.log), waits until each is ready (a TCP
port accepts, a file exists, a command exits 0; polled at a bounded interval within its timeout),
relays 127.0.0.1 ports to the Unix sockets the plan lists (the host's loopback ports engine serves
outside, or a shared workspace's services), then runs the agent and exits with its code. How the
boot went goes to the pipe the plan names (status_fd): "booted", or "failed: why" (the agent never
starts); the pipe is closed before the agent starts, so the agent cannot speak for the sandbox.
Everything left running dies with the sandbox's PID namespace. With --serve it starts the services,
makes each one's TCP port reachable at SOCKETS/PORT.sock, prints "ready" and stays until it is
killed (a service not ready in time: the reason goes to LOGS/boot-failed; no agent runs there).
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time

POLL_S = 0.002  # the readiness check's first interval (bounded: it doubles up to MAX_POLL_S)
MAX_POLL_S = 0.05


def ready(check: str, cwd: str) -> bool:
    form, _, what = check.partition(":")
    if form == "tcp":
        try:
            socket.create_connection(("127.0.0.1", int(what)), timeout=1).close()
            return True
        except OSError:
            return False
    if form == "file":
        return os.path.exists(os.path.join(cwd, what))
    return subprocess.run(["/bin/sh", "-c", what], cwd=cwd, capture_output=True, check=False).returncode == 0


def start(service: dict, logs: str, cwd: str) -> subprocess.Popen:
    command = service["command"]
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else command
    log = open(os.path.join(logs, service["name"] + ".log"), "wb")  # noqa: SIM115 - the service keeps it
    env = {**os.environ, **service.get("env", {})}
    return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)


def wait_ready(service: dict, proc: subprocess.Popen, cwd: str) -> str:
    """ "" once ready; else why not (it exited, or its timeout passed)."""
    deadline, pause = time.monotonic() + service.get("timeout_s", 30.0), POLL_S
    while not ready(service["ready"], cwd):
        if proc.poll() is not None:
            return f"service {service['name']!r} exited with {proc.returncode} before it was ready"
        if time.monotonic() > deadline:
            return f"service {service['name']!r} not ready ({service['ready']}) after {service['timeout_s']}s"
        time.sleep(pause)
        pause = min(pause * 2, MAX_POLL_S)
    return ""


def relay(server: socket.socket, connect: object) -> None:
    """Each connection the server accepts, joined to a new one that connect() opens."""
    while True:
        conn, _ = server.accept()
        try:
            outside = connect()  # type: ignore[operator]
        except OSError:
            conn.close()
            continue
        for a, b in ((conn, outside), (outside, conn)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def unix_client(path: str) -> socket.socket:
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    return client


def start_relays(relays: list, listen: str) -> None:
    """Listening before the agent starts: 127.0.0.1:port -> socket ("tcp"), or socket -> port ("unix")."""
    for item in relays:
        port, path = item["port"], item["socket"]
        if listen == "tcp":
            server = socket.create_server(("127.0.0.1", port))
            connect = lambda path=path: unix_client(path)  # noqa: E731
        else:
            server = socket.socket(socket.AF_UNIX)
            server.bind(path)
            server.listen(64)
            connect = lambda port=port: socket.create_connection(("127.0.0.1", port))  # noqa: E731
        threading.Thread(target=relay, args=(server, connect), daemon=True).start()


def start_services(plan: dict, cwd: str) -> str:
    """ "" once every service is ready; else why not."""
    for service in plan.get("services", []):
        why = wait_ready(service, start(service, plan["logs"], cwd), cwd)
        if why:
            return why
    return ""


def tell(status_fd: int, said: str) -> None:
    """The boot's outcome to engine, then the pipe closed: nothing started after this can write to it."""
    os.write(status_fd, said.encode("utf-8", "replace")[:4000])
    os.close(status_fd)


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    cwd = os.getcwd()
    if sys.argv[2] == "--serve":
        why = start_services(plan, cwd)
        if why:
            with open(os.path.join(plan["logs"], "boot-failed"), "w") as f:
                f.write(why)
            return 125
        start_relays(plan.get("relays", []), "unix")
        print("ready", flush=True)
        threading.Event().wait()  # until the sandbox is torn down
    start_relays(plan.get("relays", []), "tcp")
    why = start_services(plan, cwd)
    tell(plan["status_fd"], f"failed: {why}" if why else "booted")
    if why:
        return 125
    code = subprocess.run(sys.argv[sys.argv.index("--") + 1 :], check=False).returncode
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
