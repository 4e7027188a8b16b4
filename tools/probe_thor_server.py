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

Prints one line per figure, and `--json` for a machine-readable summary.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=10.0, help="--reset-timeout (s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, object] = {}
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
            exchange(server.port, ping, timeout=5.0)
            latencies.append(time.monotonic() - t)
            peak = max(peak, tree_rss(pid))
            time.sleep(0.1)
        figures["heavy_reset_reply"] = reply[0]["error"]["code"]
        figures["heavy_reset_seconds"] = round(time.monotonic() - started, 2)
        figures["pings_during_heavy_reset"] = len(latencies)
        figures["slowest_ping_ms"] = round(1000 * max(latencies), 1)
        figures["peak_rss_mib"] = round(peak / 2**20, 1)
        sock.close()

        s1 = exchange(server.port, b'{"v": 1, "cmd": "ping", "id": "\\ud800"}')
        figures["s1_surrogate_id_echoed"] = s1.get("id") == "\ud800"
        s3 = exchange(server.port, json.dumps({"v": 1, "cmd": "reset", "domain": "/etc/passwd",
                                               "problem": "(define (problem p) (:domain d))"}
                                              ).encode())
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
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
