"""Hostile-client probes against a real `sage-pddl thor-server` (symbolic backend), with figures.

    python tools/probe_thor_server.py [--budget 10]

Starts a server with the grounding cap lifted (`--max-atoms 10^10`, so the S2 reset really
grinds), sends the 506-byte reset whose goal needs 10^9 atoms, and meanwhile:

* pings from another client every 100 ms and reports the slowest answer;
* samples the resident memory of the server and all its processes (workers included);
* reports how the heavy reset ended (`timeout` at `--reset-timeout`, or `too-large` when the
  worker's memory cap hit first) and how long it took;
* then starts another heavy reset, sends SIGTERM and times the exit;
* and sends the S1 (lone surrogate id) and S3 (server-side path) probes.

Round 2 (issue 30; `--round2` runs only these), each against its own server, on loopback,
in bounded loops:

* partial frames: 40 connections each send a ZMTP handshake, the header of a frame just under
  16 MiB (the old limit) and then of one just under `--max-bytes`, with 99% of its data, and
  never the rest; the server's peak memory, and whether it still answers;
* a connection flood past `--max-connections`;
* descriptors: a server with RLIMIT_NOFILE 128 and 200 idle connections, then a reset;
* 8 client ids holding every slot, then a 9th client (with `--reclaim-after 1`);
* 20 unauthenticated 1 MiB requests to a server with a token: the time each costs;
* `"v": true`, `--bind ::1`, and a squatter on the port answering the client 20 MB.

Prints one line per figure, and `--json` for a machine-readable summary.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import zmq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.env.server_process import ServerProcess  # noqa: E402
from tests.env.test_thor_hostile import HEAVY_DOMAIN, HEAVY_PROBLEM, exchange  # noqa: E402


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants (Linux /proc)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,rss="], capture_output=True, text=True)
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for row in out.stdout.strip().splitlines():
        p, pp, r = (int(x) for x in row.split())
        children.setdefault(pp, []).append(p)
        rss[p] = r
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0) * 1024
        todo.extend(children.get(p, []))
    return total


def heavy_reset(port: int) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://127.0.0.1:{port}")
    sock.send(json.dumps({"v": 1, "cmd": "reset", "domain": HEAVY_DOMAIN,
                          "problem": HEAVY_PROBLEM}).encode())
    return sock


def zmtp_connection(port: int, frame_size: int, sent: int) -> socket.socket:
    """A raw ZMTP 3.0 peer (NULL mechanism, DEALER) that announces a frame of `frame_size`
    bytes and sends `sent` of them."""
    peer = socket.create_connection(("127.0.0.1", port))
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" * 32
    body = b"\x05READY" + b"\x0bSocket-Type" + (6).to_bytes(4, "big") + b"DEALER"
    peer.sendall(greeting + bytes([0x04, len(body)]) + body)
    peer.sendall(b"\x02" + frame_size.to_bytes(8, "big"))
    peer.settimeout(5.0)
    try:
        peer.sendall(b" " * sent)
    except OSError:  # the server dropped the frame (and the connection) at its header
        pass
    return peer


def request_on(port: int, message: dict, timeout: float = 5.0, host: str = "127.0.0.1") -> dict:
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
    if ":" in host:
        sock.setsockopt(zmq.IPV6, 1)
        host = f"[{host}]"
    sock.connect(f"tcp://{host}:{port}")
    try:
        sock.send(json.dumps(message).encode())
        return json.loads(sock.recv())
    except zmq.Again:
        return {"ok": False, "error": {"code": "(no reply)"}}
    finally:
        sock.close()


def ping_ok(port: int, timeout: float = 5.0) -> bool:
    return bool(request_on(port, {"v": 1, "cmd": "ping"}, timeout).get("ok"))


def round_two(figures: dict[str, object]) -> None:
    """The issue-30 probes (see the module docstring)."""
    max_bytes = 1 << 20
    for label, size in (("16MiB", 16 * max_bytes - 1), ("max_bytes", max_bytes - 1)):
        server = ServerProcess(None).start()
        try:
            before = tree_rss(server.process.pid)
            started = time.monotonic()
            peers = [zmtp_connection(server.port, size, min(size * 99 // 100, 2 * max_bytes))
                     for _ in range(40)]
            time.sleep(1.0)
            figures[f"partial_{label}_rss_mib"] = (round(before / 2**20, 1),
                                                   round(tree_rss(server.process.pid) / 2**20, 1))
            figures[f"partial_{label}_ping_ok"] = ping_ok(server.port)
            figures[f"partial_{label}_seconds"] = round(time.monotonic() - started, 2)
            for peer in peers:
                peer.close()
        finally:
            server.kill()

    server = ServerProcess(None, "--max-connections", "16").start()
    try:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(100)]
        figures["flood_100_ping_while_held"] = ping_ok(server.port, 2.0)
        for peer in idle:
            peer.close()
        figures["flood_100_ping_after"] = ping_ok(server.port, 10.0)
        figures["flood_100_rss_mib"] = round(tree_rss(server.process.pid) / 2**20, 1)
    finally:
        server.kill()

    server = ServerProcess(None, "--max-connections", "10000", open_files=128).start()
    try:
        client = zmq.Context.instance().socket(zmq.REQ)
        client.setsockopt(zmq.LINGER, 0)
        client.setsockopt(zmq.RCVTIMEO, 10_000)
        client.connect(f"tcp://127.0.0.1:{server.port}")
        client.send(b'{"v": 1, "cmd": "ping"}')
        client.recv()
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(200)]
        client.send(b'{"v": 1, "cmd": "reset", "task": "ithor#K01"}')
        try:
            figures["emfile_reset_reply"] = json.loads(client.recv()).get("error", {}).get("code")
        except zmq.Again:
            figures["emfile_reset_reply"] = "(no reply)"
        for peer in idle:
            peer.close()
        client.close()
        figures["emfile_server_alive"] = server.process.poll() is None and ping_ok(server.port)
    finally:
        server.kill()

    server = ServerProcess(None, "--reclaim-after", "1").start()
    try:
        holders = []
        for number in range(8):
            holder = zmq.Context.instance().socket(zmq.REQ)
            holder.setsockopt(zmq.LINGER, 0)
            holder.setsockopt(zmq.RCVTIMEO, 20_000)
            holder.setsockopt(zmq.ROUTING_ID, b"holder-%d" % number)
            holder.connect(f"tcp://127.0.0.1:{server.port}")
            holder.send(b'{"v": 1, "cmd": "reset", "task": "ithor#K01"}')
            holder.recv()
            holders.append(holder)
        time.sleep(1.5)
        started = time.monotonic()
        ninth = request_on(server.port, {"v": 1, "cmd": "reset", "task": "ithor#K01"}, 20.0)
        figures["ninth_client_reset"] = "ok" if ninth.get("ok") else ninth["error"]["code"]
        figures["ninth_client_seconds"] = round(time.monotonic() - started, 2)
        for holder in holders:
            holder.close()
    finally:
        server.kill()

    with tempfile.TemporaryDirectory() as folder:
        token = Path(folder) / "token"
        token.write_text("s3cret\n")
        server = ServerProcess(None, "--token-file", str(token)).start()
        try:
            big = json.dumps({"v": 1, "cmd": "ping", "id": "x" * (max_bytes - 100)}).encode()
            times, codes = [], set()
            for _ in range(20):
                started = time.monotonic()
                codes.add(exchange(server.port, [big])["error"]["code"])
                times.append(time.monotonic() - started)
            figures["unauthenticated_1MiB_codes"] = sorted(codes)
            figures["unauthenticated_1MiB_ms"] = (round(1000 * min(times), 1),
                                                  round(1000 * max(times), 1))
            figures["v_true_reply"] = request_on(
                server.port, {"v": True, "cmd": "ping", "token": "s3cret"})["error"]["code"]
        finally:
            server.kill()

    server = ServerProcess(None, "--bind", "::1").start()
    try:
        figures["bind_ipv6_loopback_ping"] = bool(
            request_on(server.port, {"v": 1, "cmd": "ping"}, host="::1").get("ok"))
        server.kill()
        figures["bind_ipv6_loopback_warned"] = "without --token-file" in server.error_text
    finally:
        server.kill()

    squatter = zmq.Context.instance().socket(zmq.ROUTER)
    squatter.setsockopt(zmq.LINGER, 0)
    port = squatter.bind_to_random_port("tcp://127.0.0.1")
    stop = threading.Event()

    def answer_hugely() -> None:
        while not stop.is_set():
            if squatter.poll(100):
                *envelope, _ = squatter.recv_multipart()
                squatter.send_multipart([*envelope, b'{"v":1,"ok":true,"x":"'
                                         + b"y" * (20 << 20) + b'"}'])

    thread = threading.Thread(target=answer_hugely, daemon=True)
    thread.start()
    from sage_pddl.env import get_env
    from sage_pddl.env.thor.client import ThorUnavailable

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    env = get_env("thor", port=port, timeout=2.0)
    started = time.monotonic()
    try:
        env.ping()
        figures["squatter_20MB_client"] = "accepted the reply"
    except ThorUnavailable:
        figures["squatter_20MB_client"] = "no answer (reply dropped)"
    finally:
        env.close()
        stop.set()
        thread.join(5)
        squatter.close()
    figures["squatter_20MB_seconds"] = round(time.monotonic() - started, 2)
    figures["squatter_20MB_client_peak_growth_mib"] = round(
        (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=10.0, help="--reset-timeout (s)")
    parser.add_argument("--round2", action="store_true", help="run only the round-2 probes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, object] = {}
    if args.round2:
        round_two(figures)
        report(figures, args.json)
        return 0
    server = ServerProcess(None, "--max-atoms", str(10**10),
                           "--reset-timeout", str(args.budget)).start()
    try:
        pid = server.process.pid
        ping = b'{"v": 1, "cmd": "ping"}'
        started = time.monotonic()
        sock = heavy_reset(server.port)
        latencies, peak = [], 0
        done = threading.Event()
        reply: list[dict] = []

        def wait_reply() -> None:
            reply.append(json.loads(sock.recv()))
            done.set()

        threading.Thread(target=wait_reply, daemon=True).start()
        while not done.is_set():
            t = time.monotonic()
            exchange(server.port, [ping], timeout=5.0)
            latencies.append(time.monotonic() - t)
            peak = max(peak, tree_rss(pid))
            time.sleep(0.1)
        figures["heavy_reset_reply"] = reply[0]["error"]["code"]
        figures["heavy_reset_seconds"] = round(time.monotonic() - started, 2)
        figures["pings_during_heavy_reset"] = len(latencies)
        figures["slowest_ping_ms"] = round(1000 * max(latencies), 1)
        figures["peak_rss_mib"] = round(peak / 2**20, 1)
        sock.close()

        s1 = exchange(server.port, [b'{"v": 1, "cmd": "ping", "id": "\\ud800"}'])
        figures["s1_surrogate_id_echoed"] = s1.get("id") == "\ud800"
        s3 = exchange(server.port, [json.dumps({"v": 1, "cmd": "reset", "domain": "/etc/passwd",
                                                "problem": "(define (problem p) (:domain d))"}
                                               ).encode()])
        figures["s3_leaks_file_content"] = "root:" in json.dumps(s3)

        sock = heavy_reset(server.port)
        time.sleep(1.0)
        t = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        code = server.wait(30)
        figures["sigterm_exit_seconds"] = round(time.monotonic() - t, 3)
        figures["sigterm_exit_code"] = code
        sock.close()
    finally:
        server.kill()
    round_two(figures)
    report(figures, args.json)
    return 0


def report(figures: dict[str, object], as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:38} {value}")


if __name__ == "__main__":
    sys.exit(main())
