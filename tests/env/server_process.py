"""Run the real `python -m sage_pddl.env.thor.server` in a child process for the ZMQ tests."""
from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import zmq

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0  # generous: two cores are shared with other test runs


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def exchange(port: int, frames: list[bytes], timeout: float = 60.0) -> dict:
    """Send raw frames (what the client library would never send) to the server on `port` over
    a fresh REQ socket, and read its JSON answer."""
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
    sock.connect(f"tcp://127.0.0.1:{port}")
    try:
        sock.send_multipart(frames)
        return json.loads(sock.recv())
    finally:
        sock.close()


class ServerProcess:
    """A thor-server child on a fixed port; `start()` waits for its "listening on" line."""

    def __init__(self, port: int | None = None, *extra: str, open_files: int | None = None):
        self.port = port or free_port()
        self.extra = extra
        self.open_files = open_files  # the child's RLIMIT_NOFILE, when given
        self.process: subprocess.Popen | None = None

    def start(self) -> ServerProcess:
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sage_pddl.env.thor.server", "--port", str(self.port),
             "--backend", "symbolic", *self.extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO_ROOT,
            preexec_fn=self._limit if self.open_files else None)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        if not line or "listening on" not in line[0]:
            self.kill()  # closes the pipes: read them first if the child already ended
            raise RuntimeError(f"thor-server did not start: {line} {self.error_text}")
        return self

    def _limit(self) -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def signal(self, signum: int) -> None:
        os.kill(self.process.pid, signum)

    def wait(self, timeout: float = 10.0) -> int:
        return self.process.wait(timeout)

    error_text = ""

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
        if self.process and not self.process.stderr.closed:
            self.process.wait(10)
            self.error_text = self.process.stderr.read()
            self.process.stdout.close()
            self.process.stderr.close()
