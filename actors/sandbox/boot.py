"""Runs inside a trial's sandbox before the agent (a standalone script: stdlib only, nothing of engine).

    python boot.py PLAN.json -- AGENT ARGV...

Starts the plan's services (their output to LOGS/<name>.log), waits until each is ready (a TCP
port accepts, a file exists, a command exits 0; polled at a bounded interval within its timeout),
relays the host loopback ports the plan lists to Unix sockets engine serves outside, then runs the
agent and exits with its code. A service not ready in time: the reason goes to LOGS/boot-failed and
the agent never starts. Everything left running dies with the sandbox's PID namespace.
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


def relay(server: socket.socket, port: int, sockets: str) -> None:
    """127.0.0.1:port inside -> the Unix socket engine serves outside (which connects to the host's)."""
    while True:
        conn, _ = server.accept()
        outside = socket.socket(socket.AF_UNIX)
        try:
            outside.connect(os.path.join(sockets, f"{port}.sock"))
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


def main() -> int:
    split = sys.argv.index("--")
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    cwd, logs = os.getcwd(), plan["logs"]
    for port in plan.get("host_ports", []):  # listening before the agent starts
        server = socket.create_server(("127.0.0.1", port))
        threading.Thread(target=relay, args=(server, port, plan["sockets"]), daemon=True).start()
    for service in plan.get("services", []):
        why = wait_ready(service, start(service, logs, cwd), cwd)
        if why:
            with open(os.path.join(logs, "boot-failed"), "w") as f:
                f.write(why)
            return 125
    code = subprocess.run(sys.argv[split + 1 :], check=False).returncode
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
