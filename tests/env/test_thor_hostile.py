"""Hostile clients against the real thor-server (child process, symbolic backend).

S1 an unencodable request id, S2 a reset that would ground 10^9 atoms, S3 paths to server-side
files, S4 clients that share one episode or carry no token. Each probe failed on the server
before it ran episodes in worker processes; tools/probe_thor_server.py measures the figures
(ping latency during a heavy reset, memory, SIGTERM) that these tests only bound loosely.
"""
from __future__ import annotations

import errno
import json
import signal
import time

import pytest
import zmq

from sage_pddl.env import get_env
from sage_pddl.env.thor.client import ThorServerError
from tests.steps import as_step

from .conftest import HIDDEN, KITCHEN_DOMAIN, KITCHEN_PROBLEM, SOLUTION
from .server_process import ServerProcess, exchange

HEAVY_DOMAIN = ("(define (domain heavy) (:predicates (p ?a ?b ?c ?d ?e)) "
                "(:action noop :parameters () :precondition (and) :effect (and)))")
HEAVY_PROBLEM = ("(define (problem heavy-1) (:domain heavy) (:objects "
                 + " ".join(f"o{i}" for i in range(64))
                 + ") (:init) (:goal (forall (?a ?b ?c ?d ?e) (p ?a ?b ?c ?d ?e))))")


def request(port: int, cmd: str, timeout: float = 60.0, **fields) -> dict:
    return exchange(port, [json.dumps({"v": 1, "cmd": cmd, **fields}).encode()], timeout)


@pytest.fixture(scope="module")
def server():
    process = ServerProcess(None).start()
    yield process
    process.kill()


def test_s1_a_lone_surrogate_id_is_echoed_escaped_and_the_server_lives_on(server):
    reply = exchange(server.port, [b'{"v": 1, "cmd": "ping", "id": "\\ud800"}'])
    assert reply["ok"] and reply["id"] == "\ud800"
    assert request(server.port, "ping", id=2)["id"] == 2
    assert server.process.poll() is None


def test_s2_a_reset_that_would_ground_a_billion_atoms_is_refused_before_it_starts(server):
    # refused from its size before any grounding (the old server ground and never answered)
    reply = request(server.port, "reset", domain=HEAVY_DOMAIN, problem=HEAVY_PROBLEM)
    assert reply["error"]["code"] == "too-large"
    assert "1,073,741,824" in reply["error"]["message"]
    assert request(server.port, "ping")["ok"]


@pytest.mark.slow
def test_s2_heavy_work_runs_beside_ping_and_ends_at_its_time_budget():
    # Without the atom cap the same reset grinds; the worker is killed at the budget. The ping
    # is answered while the reset's reply has not come: the budget is far longer than any ping
    # takes, however busy the machine.
    budget = 10
    server = ServerProcess(None, "--max-atoms", str(10**10), "--reset-timeout",
                           str(budget)).start()
    try:
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 10_000 * budget)
        sock.connect(f"tcp://127.0.0.1:{server.port}")
        sock.send(json.dumps({"v": 1, "cmd": "reset", "domain": HEAVY_DOMAIN,
                              "problem": HEAVY_PROBLEM}).encode())
        time.sleep(0.5)  # the worker is grounding now
        assert request(server.port, "ping", timeout=budget)["ok"]  # another client is served
        assert not sock.poll(0), "the reset answered before the ping: nothing ran beside it"
        reply = json.loads(sock.recv())
        sock.close()
        assert reply["error"]["code"] in ("timeout", "too-large"), reply
        assert request(server.port, "ping", timeout=60)["clients"] == 0  # its worker is gone
    finally:
        server.kill()


def test_s2_sigterm_during_a_heavy_reset_stops_the_server():
    server = ServerProcess(None, "--max-atoms", str(10**10), "--reset-timeout", "60").start()
    try:
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://127.0.0.1:{server.port}")
        sock.send(json.dumps({"v": 1, "cmd": "reset", "domain": HEAVY_DOMAIN,
                              "problem": HEAVY_PROBLEM}).encode())
        time.sleep(0.5)
        server.signal(signal.SIGTERM)
        assert server.wait(50) == 0  # before the reset's 60 s budget: SIGTERM stopped it
        sock.close()
    finally:
        server.kill()


@pytest.mark.parametrize("fields", [
    {"domain": "/etc/passwd", "problem": KITCHEN_PROBLEM},
    {"domain": "../../../../etc/passwd", "problem": KITCHEN_PROBLEM},
    {"task": "/etc/passwd#x"},
    {"task": "ithor#K01", "domain": "/etc/passwd"},
])
def test_s3_the_server_reads_no_path_a_client_names(server, fields):
    reply = request(server.port, "reset", **fields)
    assert reply["ok"] is False and reply["error"]["code"] == "bad-problem"
    assert "root:" not in reply["error"]["message"]
    assert "reads no paths" in reply["error"]["message"]


def test_s3_allowed_folders_are_read_but_their_content_is_not_quoted(tmp_path):
    (tmp_path / "kitchen.pddl").write_text(KITCHEN_DOMAIN)
    (tmp_path / "secret.pddl").write_text("(define (domain secret) (:predicates (p)) TOP-SECRET")
    server = ServerProcess(None, "--allow-paths", str(tmp_path)).start()
    try:
        good = request(server.port, "reset", domain=str(tmp_path / "kitchen.pddl"),
                       problem=KITCHEN_PROBLEM)
        assert good["ok"] and good["domain"] == "mini-kitchen"
        bad = request(server.port, "reset", domain=str(tmp_path / "secret.pddl"),
                      problem=KITCHEN_PROBLEM)
        assert bad["error"]["code"] == "bad-problem"
        assert "TOP-SECRET" not in bad["error"]["message"]
        outside = request(server.port, "reset", domain=str(tmp_path.parent / "x.pddl"),
                          problem=KITCHEN_PROBLEM)
        assert "outside the folders" in outside["error"]["message"]
    finally:
        server.kill()


def test_s4_each_client_has_its_own_episode(server, kitchen_domain, kitchen_problem):
    first = get_env("thor", port=server.port, timeout=60.0)
    second = get_env("thor", port=server.port, timeout=60.0)
    try:
        first.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN)
        assert first.step(as_step(SOLUTION[0])).success  # at the fridge
        with pytest.raises(ThorServerError, match="no-episode"):
            second.step(as_step(SOLUTION[0]))  # the first client's episode is not the second's
        second.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN)
        assert first.episode and second.episode and first.episode != second.episode
        assert ("at", "fridge") in first.true_state()  # untouched by the second reset
        assert ("at", "counter") in second.true_state()
    finally:
        first.close()
        second.close()


def test_s4_a_token_file_locks_out_clients_without_the_token(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    server = ServerProcess(None, "--token-file", str(token)).start()
    try:
        assert request(server.port, "ping")["error"]["code"] == "unauthorized"
        assert request(server.port, "ping", token="wrong")["error"]["code"] == "unauthorized"
        assert request(server.port, "ping", token="s3cret")["ok"]
        env = get_env("thor", port=server.port, timeout=60.0, token="s3cret")
        try:
            env.reset(None, task="ithor#K01")
            assert env.state()["task"] == "ithor#K01"
        finally:
            env.close()
    finally:
        server.kill()


def test_binding_beyond_loopback_without_a_token_warns():
    server = ServerProcess(None, "--bind", "0.0.0.0").start()
    server.kill()
    assert "without --token-file" in server.error_text


@pytest.mark.parametrize("port", ["-1", "65536", "http"])
def test_b4_ports_are_checked_when_the_command_line_is_read(port, capsys):
    from sage_pddl.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["thor-server", "--port", port])
    assert exited.value.code == 2
    assert "a port is a whole number from 0 to 65535" in capsys.readouterr().err


def test_unknown_fields_and_bad_tokens_are_bad_requests(server):
    assert request(server.port, "ping", token=7)["error"]["code"] == "bad-request"
    deep = b'{"v": 1, "cmd": "ping", "id": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert exchange(server.port, [deep])["error"]["code"] in ("bad-json", "too-large")
    assert request(server.port, "ping")["ok"]


def test_step_before_reset_has_no_episode_and_close_needs_no_episode(server):
    assert request(server.port, "step", step="moveto Table")["error"]["code"] == "no-episode"
    assert request(server.port, "get_state")["error"]["code"] == "no-episode"


def test_a_kitchen_episode_over_raw_requests_reports_its_episode(server):
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    sock.connect(f"tcp://127.0.0.1:{server.port}")
    try:
        sock.send(json.dumps({"v": 1, "cmd": "reset", "domain": KITCHEN_DOMAIN,
                              "problem": KITCHEN_PROBLEM}).encode())
        reset = json.loads(sock.recv())
        sock.send(json.dumps({"v": 1, "cmd": "step", "step": "moveto Fridge"}).encode())
        step = json.loads(sock.recv())
    finally:
        sock.close()
    assert reset["ok"] and step["ok"] and reset["episode"] == step["episode"]


# --- round 2 (issue 30): what a peer can do before authentication, and slots ------------------

def test_a_frame_over_max_bytes_is_dropped_as_it_arrives(server):
    """ZMQ's own limit is `--max-bytes` (it was 16 times that): a frame over it is dropped
    with its connection, unanswered, so a partial frame holds at most `--max-bytes`."""
    with pytest.raises(zmq.Again):
        exchange(server.port, [b" " * ((1 << 20) + 1)], timeout=1.0)
    assert request(server.port, "ping")["ok"] and server.process.poll() is None


def test_running_out_of_file_descriptors_is_answered_busy_and_the_server_lives_on(monkeypatch):
    """No descriptor left for a worker's pipe is `busy`, not the end of the loop. (A flood of
    connections no longer gets the server there: `--max-connections` is held below the
    descriptor limit, test_thor_admission.py; anything else in the process may still.)"""
    from sage_pddl.env.thor import server as thor_server
    from sage_pddl.env.thor.worker import WorkerSettings

    class NoDescriptors:
        def Pipe(self):
            raise OSError(errno.EMFILE, "Too many open files")

    class Socket:
        def __init__(self):
            self.sent = []

        def send_multipart(self, frames):
            self.sent.append(frames)

    monkeypatch.setattr(thor_server, "_worker_context", NoDescriptors)
    replies = Socket()
    loop = thor_server.ThorServer(replies, WorkerSettings("symbolic"), thor_server.ServerLimits())
    for cmd in ("reset", "ping"):
        loop.on_message([b"client", b"", json.dumps(
            {"v": 1, "cmd": cmd, "task": "ithor#K01"} if cmd == "reset"
            else {"v": 1, "cmd": cmd}).encode()])
    reset, ping = (json.loads(frames[-1]) for frames in replies.sent)
    assert reset["error"]["code"] == "busy" and "try again" in reset["error"]["message"]
    assert ping["ok"] and loop.episodes == {}


def _clients(port: int) -> int:
    return request(port, "ping")["clients"]


def test_the_episode_of_a_client_that_went_away_is_ended():
    server = ServerProcess(None, "--reclaim-after", "0.2").start()
    try:
        env = get_env("thor", port=server.port, timeout=5.0)
        env.reset(None, task="ithor#K01")
        assert _clients(server.port) == 1
        env.close()
        deadline = time.monotonic() + 30
        while _clients(server.port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _clients(server.port) == 0
    finally:
        server.kill()


def test_when_every_slot_is_taken_the_longest_idle_episode_makes_room():
    server = ServerProcess(None, "--max-clients", "1", "--reclaim-after", "0.2").start()
    first = get_env("thor", port=server.port, timeout=5.0)
    second = get_env("thor", port=server.port, timeout=5.0)
    try:
        first.reset(None, task="ithor#K01")
        time.sleep(0.5)  # idle longer than --reclaim-after
        second.reset(None, task="ithor#K01")  # was `busy` for the 900 s idle timeout
        with pytest.raises(ThorServerError, match="no-episode"):
            first.step(as_step("moveto Fridge"))
    finally:
        first.close()
        second.close()
        server.kill()


def test_a_large_request_without_the_token_is_refused_before_it_is_read(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    server = ServerProcess(None, "--token-file", str(token)).start()
    try:
        garbage = b"{" + b" " * 100_000  # not JSON: read, it would be bad-json
        assert exchange(server.port, [garbage])["error"]["code"] == "unauthorized"
        padded = json.dumps({"v": 1, "cmd": "ping", "token": "s3cret", "id": "x" * 100_000})
        assert exchange(server.port, [padded.encode()])["ok"]
    finally:
        server.kill()


def test_the_ipv6_loopback_is_accepted_as_loopback():
    server = ServerProcess(None, "--bind", "::1").start()
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.IPV6, 1)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    sock.connect(f"tcp://[::1]:{server.port}")
    try:
        sock.send(json.dumps({"v": 1, "cmd": "ping"}).encode())
        assert json.loads(sock.recv())["ok"]
    finally:
        sock.close()
        server.kill()
    assert "without --token-file" not in server.error_text


def test_a_domains_dir_that_is_a_symlink_loop_is_a_setting_error(tmp_path):
    """It was resolved before it was checked: Python's RuntimeError, exit 70."""
    from sage_pddl.env.thor.server import ServerError, serve

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(ServerError, match=r"--domains-dir .*a: no such folder"):
        serve(0, domains_dirs=[tmp_path / "a"], handle_signals=False)
