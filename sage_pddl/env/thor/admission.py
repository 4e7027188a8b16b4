"""The thor-server's admission of connections: idle or unauthenticated peers cannot hold the
capacity that authenticated clients need.

At most `cap` connections are open at once (`--max-connections`, lowered to what the process's
descriptor limit allows: `connection_cap`). ZMQ's socket monitor reports each connection the
server's socket accepts (with its descriptor) and each it loses; a connection is *trusted* once
a request that passed the server's token check came on it (without a token, any request the
server could read). When an accepted connection takes the open ones past the cap, the
untrusted connection heard from least recently (its accept, else its last request) is evicted:
its descriptor is shut down (shutdown(2); ZMQ then closes it and reports the loss), so 64
connections that finish the handshake and say nothing, or plain TCP connects that never
handshake, make room for the next client instead of locking everyone out. Trusted connections
are never evicted; a newcomer past a cap of trusted connections is evicted itself. ZMQ asks an
authentication handler (ZAP, RFC 27) at `ZAP_ENDPOINT` before a handshake finishes;
`ConnectionGuard` refuses one while the open connections are past the cap.

ZMQ's own limits bound the rest: a peer must finish its handshake within `HANDSHAKE_MS`
(ZMQ_HANDSHAKE_IVL), and a peer that stops answering ZMTP heartbeats (which libzmq answers by
itself, idle or not) is dropped after `HEARTBEAT_TIMEOUT_MS`.
"""
from __future__ import annotations

import os
import resource
import socket as sockets
import time
from typing import Any

from sage_pddl.pddl.errors import SageError

ZAP_ENDPOINT = "inproc://zeromq.zap.01"  # where ZMQ asks its authentication handler (RFC 27)
HANDSHAKE_MS = 5_000
"""The longest a peer may take to finish ZMQ's handshake (shorter than ZMQ's default)."""
HEARTBEAT_IVL_MS = 10_000
HEARTBEAT_TIMEOUT_MS = 30_000
"""A ZMTP heartbeat every `HEARTBEAT_IVL_MS`; a peer silent this long after one is dropped."""
DESCRIPTORS_PER_WORKER = 4
"""Descriptors an episode's worker costs the server process (its pipe, its process sentinel,
and those its start needs a moment)."""
SPARE_DESCRIPTORS = 16
"""Descriptors kept free beyond those in use at start and the workers' (the listening socket,
ZMQ's mailboxes, the log)."""


class AdmissionError(SageError):
    """The descriptor limit leaves no room for a single connection."""


def connection_cap(wanted: int, workers: int) -> tuple[int, str | None]:
    """The connections the server can keep open at once: `wanted` (`--max-connections`), or
    fewer when the descriptor limit (RLIMIT_NOFILE, raised towards its hard limit first) cannot
    hold them beside the descriptors in use and those of `workers` episode workers; with a note
    saying so (None when `wanted` fits). Past the limit ZMQ cannot accept, and its I/O thread
    retries the accept without pause, at full CPU, while out of descriptors."""
    reserve = _in_use() + DESCRIPTORS_PER_WORKER * workers + SPARE_DESCRIPTORS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted, None
    if wanted + reserve > soft:
        raised = wanted + reserve if hard == resource.RLIM_INFINITY else min(hard, wanted + reserve)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (OSError, ValueError):
            pass
    room = soft - reserve
    if room < 1:
        raise AdmissionError(f"the descriptor limit ({soft}, ulimit -n) leaves no room for a "
                             f"connection beside {reserve} for the server and --max-clients "
                             f"{workers}; raise the limit or lower --max-clients")
    if room >= wanted:
        return wanted, None
    return room, (f"--max-connections {wanted} lowered to {room}: the descriptor limit is "
                  f"{soft} (ulimit -n) and {reserve} are kept for the server and its workers")


def _in_use() -> int:
    """Descriptors the process has open (Linux's /proc; elsewhere an estimate)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 32


def _shut_down(fd: int) -> None:
    """Shut down the connection on descriptor `fd` without closing it (ZMQ owns it, and closes
    it when it sees the connection end)."""
    try:
        connection = sockets.socket(fileno=fd)
    except OSError:
        return
    try:
        connection.shutdown(sockets.SHUT_RDWR)
    except OSError:
        pass
    finally:
        connection.detach()


class ConnectionGuard:
    """The open connections of the server's socket, which of them are trusted, and the ZAP
    handler (see the module docstring). `closed` collects the descriptors of connections that
    went away."""

    def __init__(self, context: Any, socket: Any, cap: int):
        import zmq  # start-up time: the thor-server command and its client load it on use
        from zmq.utils.monitor import recv_monitor_message  # now: not once a flood took every fd

        self._receive = recv_monitor_message
        self.cap = cap
        self.heard: dict[int, float] = {}  # open connection -> when last heard from
        self.trusted: set[int] = set()
        self.evicted: set[int] = set()  # shut down, their loss not reported yet
        self.closed: list[int] = []
        self.handler = context.socket(zmq.REP)
        self.handler.setsockopt(zmq.LINGER, 0)
        self.handler.bind(ZAP_ENDPOINT)  # before the server's socket accepts anyone
        socket.setsockopt(zmq.ZAP_DOMAIN, b"sage-pddl")
        socket.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)
        socket.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        self.monitor = socket.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)

    @property
    def open(self) -> int:
        return len(self.heard)

    def read_events(self) -> None:
        """Note the connections accepted and closed since the last call, then make room."""
        import zmq  # start-up time: the thor-server command and its client load it on use

        while True:
            try:
                event = self._receive(self.monitor, zmq.NOBLOCK)
            except zmq.Again:
                break
            fd = int(event["value"])
            if event["event"] == zmq.EVENT_ACCEPTED:
                self.heard[fd] = time.monotonic()
            elif event["event"] == zmq.EVENT_DISCONNECTED:
                if fd in self.evicted:
                    self.evicted.discard(fd)
                else:
                    self.heard.pop(fd, None)
                    self.trusted.discard(fd)
                self.closed.append(fd)
        self._make_room()

    def _make_room(self) -> None:
        """Evict untrusted connections, least recently heard from first, while past the cap."""
        while len(self.heard) > self.cap:
            untrusted = [(when, fd) for fd, when in self.heard.items() if fd not in self.trusted]
            if not untrusted:
                return
            _, fd = min(untrusted)
            del self.heard[fd]
            self.evicted.add(fd)
            _shut_down(fd)

    def request_on(self, fd: int, *, trusted: bool) -> None:
        """A request came on connection `fd`; `trusted`: it passed the token check."""
        if fd in self.heard:
            self.heard[fd] = time.monotonic()
            if trusted:
                self.trusted.add(fd)

    def answer(self) -> None:
        """Answer one ZAP request: admitted while the open connections (this one included,
        as its accept was reported before its handshake began) are within the cap."""
        self.read_events()
        frames = self.handler.recv_multipart()
        version, request_id = frames[0], frames[1] if len(frames) > 1 else b""
        admitted = self.open <= self.cap
        self.handler.send_multipart([version, request_id, b"200" if admitted else b"400",
                                     b"OK" if admitted else b"too many connections", b"", b""])

    def close(self) -> None:
        self.monitor.close(linger=0)
        self.handler.close(linger=0)
