"""Idle and unauthenticated connections cannot hold the thor-server's capacity
(`sage_pddl/env/thor/admission.py`), against the real server in a child process.

64 connections that finished ZMQ's handshake and said nothing took every slot of the old
server for as long as they stayed (token holders locked out too), and plain TCP connects
locked clients out for ZMQ's 30 s handshake time; with `--max-connections` above the
descriptor limit the server spun at full CPU while out of descriptors. The waits here are
generous bounds for a loaded machine, not timings: the old server never served the client.
"""
from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import zmq

from .server_process import ServerProcess, exchange

IDLE = 64
SERVED_WITHIN = 20.0  # seconds: a generous bound; the old server never answered


def ping(port: int, timeout: float = SERVED_WITHIN, **fields: str) -> dict:
    return exchange(port, [json.dumps({"v": 1, "cmd": "ping", **fields}).encode()], timeout)


def handshaken_idle(port: int, count: int) -> list[zmq.Socket]:
    """`count` DEALER connections that finish ZMQ's handshake and send nothing (libzmq still
    answers the server's heartbeats for them)."""
    context = zmq.Context.instance()
    sockets, monitors = [], []
    for _ in range(count):
        idle = context.socket(zmq.DEALER)
        idle.setsockopt(zmq.LINGER, 0)
        monitors.append(idle.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED))
        idle.connect(f"tcp://127.0.0.1:{port}")
        sockets.append(idle)
    for monitor in monitors:  # every one handshaken before the client comes
        assert monitor.poll(int(SERVED_WITHIN * 1000)), "an idle connection never handshook"
        monitor.close(linger=0)
    return sockets


@pytest.fixture
def token_file(tmp_path) -> Iterator[str]:
    path = tmp_path / "token"
    path.write_text("s3cret\n")
    yield str(path)


@pytest.mark.parametrize("with_token", [False, True], ids=["no-token", "token"])
def test_idle_handshaken_connections_cannot_lock_out_a_client(with_token, token_file):
    extra = ("--token-file", token_file) if with_token else ()
    server = ServerProcess(None, "--max-connections", str(IDLE), *extra).start()
    idle = handshaken_idle(server.port, IDLE)
    try:
        fields = {"token": "s3cret"} if with_token else {}
        assert ping(server.port, **fields)["ok"]
        assert ping(server.port, **fields)["ok"] and server.process.poll() is None
    finally:
        for connection in idle:
            connection.close()
        server.kill()


def test_plain_tcp_connects_cannot_lock_out_a_client():
    server = ServerProcess(None, "--max-connections", "2").start()
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(8)]
    try:
        assert ping(server.port)["ok"]
    finally:
        for connection in idle:
            connection.close()
        server.kill()


def test_connections_that_were_served_are_kept_and_a_newcomer_past_them_waits():
    """Served (trusted) connections are never evicted: past a cap of them a newcomer is
    refused until one goes (its ZMQ retries)."""
    server = ServerProcess(None, "--max-connections", "2").start()
    context = zmq.Context.instance()
    clients = []
    try:
        for _ in range(2):
            client = context.socket(zmq.REQ)
            client.setsockopt(zmq.LINGER, 0)
            client.setsockopt(zmq.RCVTIMEO, int(SERVED_WITHIN * 1000))
            client.connect(f"tcp://127.0.0.1:{server.port}")
            client.send(json.dumps({"v": 1, "cmd": "ping"}).encode())
            assert json.loads(client.recv())["ok"]
            clients.append(client)
        with pytest.raises(zmq.Again):
            ping(server.port, timeout=1.5)
        for client in clients:  # still served
            client.send(json.dumps({"v": 1, "cmd": "ping"}).encode())
            assert json.loads(client.recv())["ok"]
        clients.pop().close()
        assert ping(server.port)["ok"]
    finally:
        for client in clients:
            client.close()
        server.kill()


def test_max_connections_is_lowered_to_what_the_descriptor_limit_allows():
    server = ServerProcess(None, "--max-connections", "10000", open_files=96).start()
    idle = []
    try:
        for _ in range(120):  # more than the server has descriptors for
            idle.append(socket.create_connection(("127.0.0.1", server.port)))
        assert ping(server.port)["ok"] and server.process.poll() is None
    finally:
        for connection in idle:
            connection.close()
        server.kill()
    assert "--max-connections 10000 lowered to" in server.error_text
    assert "the descriptor limit is 96" in server.error_text
