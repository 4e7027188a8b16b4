"""The real thor-server (child process, symbolic backend) and the real client over ZMQ."""
from __future__ import annotations

import signal
import threading
import time

import pytest

from sage_pddl.env import get_env
from sage_pddl.env.thor.client import ThorServerError, ThorTimeout, ThorUnavailable
from sage_pddl.env.thor.protocol import encode
from sage_pddl.env.transitions import read_transitions
from tests.steps import as_step

from .conftest import HIDDEN, KITCHEN_DOMAIN, KITCHEN_PROBLEM, SOLUTION
from .server_process import ServerProcess, exchange, free_port

ANSWERS = 60.0
"""Seconds a client waits for a server that runs: long enough for any load (only a failing test
waits that long). A test of timeouts shortens it only while the server cannot answer."""


def wait_at_most(env, seconds: float) -> None:
    """The client's timeout from now on (its socket is rebuilt with it)."""
    env.timeout = seconds
    env._connect()


@pytest.fixture(scope="module")
def server():
    process = ServerProcess(None, "--max-bytes", "4096").start()
    yield process
    process.kill()


@pytest.fixture
def client(server):
    env = get_env("thor", port=server.port, timeout=ANSWERS)
    yield env
    env.close()


def test_ping_reset_step_round_trip_with_client_log(server, tmp_path, kitchen_domain,
                                                    kitchen_problem):
    log = tmp_path / "remote.jsonl"
    env = get_env("thor", port=server.port, timeout=ANSWERS, log=log)
    try:
        answer = env.ping()
        assert answer["ok"] and answer["backend"] == "symbolic" and answer["protocol"] == 1
        observation = env.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN,
                                faults=["fail@1:slipped"])
        assert "Apple" not in observation.visible_objects and "Mug" in observation.visible_objects
        results = [env.step(as_step(step)) for step in SOLUTION[:2]]
        assert results[0].success and (results[1].success, results[1].message,
                                       results[1].code) == (False, "slipped", "injected-failure")
        for step in SOLUTION[1:]:
            assert env.step(as_step(step)).success
        assert env.goal_reached() is True
        assert ("on", "apple", "table") in env.true_state()
        apple = next(o for o in env.objects() if o["name"] == "Apple")
        assert apple["visible"] and apple["facts"] == ["(on apple table)"]
    finally:
        env.close()
    records = list(read_transitions(log))
    assert [r.step for r in records] == list(range(len(SOLUTION) + 1))
    assert records[1].code == "injected-failure" and records[-1].success


def test_reset_by_domain_text_and_json_steps(client):
    answer = client.request("reset", domain=KITCHEN_DOMAIN, problem=KITCHEN_PROBLEM)
    assert answer["task"] == "fetch-apple" and answer["domain"] == "mini-kitchen"
    result = client.step(as_step({"action": "moveto", "object": "Fridge", "target": ""}))
    assert result.success
    bad = client.step(as_step({"action": "pick", "object": "Apple", "target": "Fridge"}))
    assert not bad.success and bad.code == "pick/requires/any-of"  # no hidden facts this time


@pytest.mark.parametrize("frames, code", [
    ([b"{not json"], "bad-json"),
    ([b"\xff\xfe"], "bad-json"),
    ([b"[1, 2]"], "bad-json"),
    ([encode({"v": 1, "cmd": "dance"})], "unknown-command"),
    ([encode({"v": 2, "cmd": "ping"})], "version-mismatch"),
    ([encode({"cmd": "ping"})], "version-mismatch"),
    ([encode({"v": 1, "cmd": "step"})], "bad-request"),
    ([encode({"v": 1, "cmd": "step", "step": {"action": 3}})], "bad-request"),
    ([encode({"v": 1, "cmd": "ping", "extra": 1})], "bad-request"),
    ([encode({"v": 1, "cmd": "reset", "task": "x", "problem": "y"})], "bad-request"),
    ([encode({"v": 1, "cmd": "reset", "domain": "(define", "problem": "(define"})],
     "bad-problem"),
    ([encode({"v": 1, "cmd": "ping"}), b"second frame"], "bad-request"),
    ([encode({"v": True, "cmd": "ping"})], "version-mismatch"),
    ([encode({"v": 1.0, "cmd": "ping"})], "version-mismatch"),
])
def test_bad_messages_get_error_replies_and_the_server_keeps_serving(server, frames, code):
    reply = exchange(server.port, frames, timeout=ANSWERS)
    assert reply["v"] == 1 and reply["ok"] is False
    assert reply["error"]["code"] == code and reply["error"]["message"]
    assert exchange(server.port, [encode({"v": 1, "cmd": "ping", "id": 7})])["id"] == 7
    assert server.process.poll() is None


def test_step_before_reset_is_no_episode():
    with_server = ServerProcess().start()
    env = get_env("thor", port=with_server.port, timeout=ANSWERS)
    try:
        with pytest.raises(ThorServerError, match=r"\[no-episode\]"):
            env.request("step", step="moveto Table")
    finally:
        env.close()
        with_server.kill()


def test_nothing_listening_is_a_clear_error():
    port = free_port()
    env = get_env("thor", port=port, timeout=0.3)
    started = time.monotonic()
    try:
        with pytest.raises(ThorUnavailable) as raised:
            env.ping()
    finally:
        env.close()
    assert str(raised.value) == (
        f"no sage-pddl thor-server answered at tcp://127.0.0.1:{port} within 0.3 s "
        f"(2 attempts); start one with `sage-pddl thor-server --port {port}`")
    assert time.monotonic() - started < 5


def test_timeouts_rebuild_the_socket_and_idempotent_commands_retry(kitchen_domain,
                                                                   kitchen_problem,
                                                                   monkeypatch):
    server = ServerProcess().start()
    env = get_env("thor", port=server.port, timeout=ANSWERS)
    try:
        env.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN)
        server.signal(signal.SIGSTOP)  # a server that hangs: any timeout runs out
        wait_at_most(env, 0.5)
        with pytest.raises(ThorTimeout, match="did not answer 'step'.*not retried"):
            env.step(as_step(SOLUTION[0]))
        with pytest.raises(ThorUnavailable):
            env.ping()
        # the server resumes once the first attempt has timed out: the retry, on a fresh
        # socket, gets the answer
        rebuild = env._connect

        def resume_then_rebuild():
            server.signal(signal.SIGCONT)
            env.timeout = ANSWERS
            rebuild()

        monkeypatch.setattr(env, "_connect", resume_then_rebuild)
        assert env.ping()["ok"]
        monkeypatch.undo()
        assert env.step(as_step(SOLUTION[0])).success  # moveto always applies: the socket works again
        assert env.state()["ok"]
    finally:
        env.close()
        server.kill()


def test_client_reconnects_to_a_restarted_server(kitchen_domain, kitchen_problem):
    server = ServerProcess().start()
    env = get_env("thor", port=server.port, timeout=ANSWERS)
    try:
        env.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN)
        assert env.step(as_step(SOLUTION[0])).success
        first_id = env.ping()["server_id"]
        server.kill()  # dies mid-episode
        wait_at_most(env, 0.5)
        with pytest.raises(ThorTimeout):
            env.step(as_step(SOLUTION[1]))
        server = ServerProcess(server.port).start()  # same port
        wait_at_most(env, ANSWERS)
        assert env.ping()["server_id"] != first_id
        with pytest.raises(ThorServerError, match=r"\[no-episode\]"):
            env.step(as_step(SOLUTION[1]))  # the new server has no episode: the planner must reset
        env.reset(kitchen_problem, domain=kitchen_domain, hidden=HIDDEN)
        assert all(env.step(as_step(step)).success for step in SOLUTION)
        assert env.goal_reached() is True
    finally:
        env.close()
        server.kill()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "close"])
def test_server_exits_cleanly(how):
    server = ServerProcess().start()
    try:
        if how == "close":
            env = get_env("thor", port=server.port, timeout=ANSWERS)
            env.shutdown_server()
            env.close()
        else:
            server.signal(getattr(signal, how))
        assert server.wait(10) == 0
    finally:
        server.kill()
    assert "Traceback" not in server.error_text


def test_port_in_use_is_a_clear_startup_error(server):
    clash = ServerProcess(server.port)
    with pytest.raises(RuntimeError, match="cannot listen on tcp://127.0.0.1"):
        clash.start()


def test_reset_from_a_task_reference(client):
    pytest.importorskip("sage_pddl.tasks")
    observation = client.reset(task="ithor#K01")
    assert observation.visible_objects and observation.text
    state = client.state()
    assert state["task"] == "ithor#K01" and state["domain"] == "ithor"
    with pytest.raises(ThorServerError, match=r"\[bad-problem\]"):
        client.reset(task="ithor#NOPE")


def test_a_reply_over_the_clients_limit_counts_as_no_answer():
    """Whatever squats on the port cannot make the client hold a reply of any size."""
    import zmq

    squatter = zmq.Context.instance().socket(zmq.ROUTER)
    squatter.setsockopt(zmq.LINGER, 0)
    port = squatter.bind_to_random_port("tcp://127.0.0.1")
    answered = threading.Event()

    def answer_hugely() -> None:
        while not answered.is_set():
            if squatter.poll(100):
                *envelope, _ = squatter.recv_multipart()
                squatter.send_multipart([*envelope, b'{"v":1,"ok":true,"x":"' + b"y" * 5000
                                         + b'"}'])

    thread = threading.Thread(target=answer_hugely, daemon=True)
    thread.start()
    env = get_env("thor", port=port, timeout=0.5, max_reply_bytes=4096)
    try:
        with pytest.raises(ThorUnavailable):
            env.ping()
    finally:
        answered.set()
        thread.join(5)
        env.close()
        squatter.close()
