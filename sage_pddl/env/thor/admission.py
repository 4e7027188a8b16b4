"""The thor-server's admission of connections: at most a cap of them open at once.

ZMQ asks an authentication handler (ZAP, RFC 27) at `ZAP_ENDPOINT` before it lets a peer's
handshake finish; `ConnectionGuard` is that handler. It counts the connections the server's
socket accepted and lost (ZMQ's socket monitor) and refuses a handshake past the cap, so a
peer that has not authenticated can hold no more than its share of the server.
"""
from __future__ import annotations

from typing import Any

ZAP_ENDPOINT = "inproc://zeromq.zap.01"  # where ZMQ asks its authentication handler (RFC 27)


class ConnectionGuard:
    """Caps the open connections of the server's socket. ZMQ's socket monitor reports each
    accepted and each closed connection; with a ZAP domain set, ZMQ asks the ZAP handler
    (`ZAP_ENDPOINT`, RFC 27) before it completes a handshake, and the handler refuses one past
    `cap` (ZMQ then drops it). Refused peers reconnect by themselves and are admitted once
    others have gone. `closed` collects the descriptors of connections that went away."""

    def __init__(self, context: Any, socket: Any, cap: int):
        import zmq  # start-up time: the thor-server command and its client load it on use

        self.cap = cap
        self.open = 0
        self.closed: list[int] = []
        self.handler = context.socket(zmq.REP)
        self.handler.setsockopt(zmq.LINGER, 0)
        self.handler.bind(ZAP_ENDPOINT)  # before the server's socket accepts anyone
        socket.setsockopt(zmq.ZAP_DOMAIN, b"sage-pddl")
        self.monitor = socket.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)

    def read_events(self) -> None:
        """Count the connections accepted and closed since the last call."""
        import zmq  # start-up time: the thor-server command and its client load it on use
        from zmq.utils.monitor import recv_monitor_message  # start-up time: as zmq

        while True:
            try:
                event = recv_monitor_message(self.monitor, zmq.NOBLOCK)
            except zmq.Again:
                return
            if event["event"] == zmq.EVENT_ACCEPTED:
                self.open += 1
            elif event["event"] == zmq.EVENT_DISCONNECTED:
                self.open -= 1
                self.closed.append(int(event["value"]))

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
