"""Every HTTP call to an LLM server has a total deadline and a bounded answer
(`sage_pddl/llm/http.py`), against a server that drips its answer or never ends it.

A call used to time out only when one read waited longer than the timeout (a server answering
a byte at a time was waited on for ever) and read any body whole (3 GB in 8 s from an
endless one). Each call here runs in a thread joined with a generous bound, so a call that
hangs fails the test instead of hanging the run."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sage_pddl.llm import http
from sage_pddl.llm.errors import LLMError, LLMTimeout
from sage_pddl.llm.http import AnswerTooLarge
from sage_pddl.llm.ollama import OllamaBackend

MESSAGES = [{"role": "user", "content": "Put the apple in the fridge."}]


class HostileServer:
    """Answers every POST per `mode`: `drip` (headers, then one body byte every 20 ms for
    ever), `drip-headers` (the status line a byte at a time), `huge` (a 1 MiB body),
    `answer-then-drip` (a chat answer to the first request, kept alive, then `drip`)."""

    def __init__(self, mode: str):
        stopping = self.stopping = threading.Event()
        answered: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answered.append(self.path)
                try:
                    if mode == "answer-then-drip" and len(answered) == 1:
                        body = json.dumps({"model": "tiny", "done": True, "message": {
                            "role": "assistant", "content": '{"steps": []}'}}).encode()
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                    if mode == "drip-headers":
                        for byte in b"HTTP/1.1 200 OK\r\n" * 10_000:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            if stopping.wait(0.02):
                                return
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    size = 1 << 20 if mode == "huge" else 1 << 30
                    self.send_header("Content-Length", str(size))
                    self.end_headers()
                    if mode == "huge":
                        self.wfile.write(b" " * size)
                        return
                    while not stopping.wait(0.02):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                except OSError:  # the client hung up: what it should do
                    return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def ollama(url: str, timeout: float) -> Any:
    return OllamaBackend(model="tiny", host=url, timeout=timeout, retries=0)


def openai(url: str, timeout: float) -> Any:
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    from sage_pddl.llm.openai_compat import OpenAICompatBackend

    return OpenAICompatBackend(model="tiny", base_url=url + "/v1", api_key="x", timeout=timeout,
                               retries=0)


def failure_of(make: Callable[[str, float], Any], mode: str, timeout: float,
               calls: int = 1) -> LLMError:
    """The error of the last of `calls` calls of one backend to a server in `mode` (the
    earlier ones must succeed)."""
    server = HostileServer(mode)
    outcome: list[BaseException | None] = []

    def call() -> None:
        backend = make(server.url, timeout)
        for _ in range(calls - 1):
            backend.complete(MESSAGES)
        try:
            backend.complete(MESSAGES)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - examined below
            outcome.append(error)

    thread = threading.Thread(target=call, daemon=True)
    try:
        thread.start()
        thread.join(60)
        assert not thread.is_alive(), f"the call to a {mode} server did not end"
    finally:
        server.stop()
    (error,) = outcome
    assert isinstance(error, LLMError), repr(error)
    return error


@pytest.fixture(params=[ollama, openai], ids=["ollama", "openai"])
def make(request: pytest.FixtureRequest) -> Iterator[Callable[[str, float], Any]]:
    yield request.param


@pytest.mark.parametrize("mode", ["drip", "drip-headers"])
def test_a_dripped_answer_ends_at_the_calls_deadline(make, mode):
    started = time.monotonic()
    error = failure_of(make, mode, timeout=1.0)
    assert isinstance(error, LLMTimeout) and "within 1 s" in str(error), error
    assert time.monotonic() - started < 30


def test_an_answer_over_the_limit_is_refused(make, monkeypatch):
    monkeypatch.setattr(http, "MAX_ANSWER_BYTES", 64 * 1024)
    error = failure_of(make, "huge", timeout=30.0)
    assert isinstance(error, AnswerTooLarge) and "more than 65,536 bytes" in str(error), error


def test_the_deadline_ends_a_dripped_answer_on_a_kept_alive_connection():
    """The second call runs on the connection the first one opened (no new connection to
    learn a socket from) and still ends at its deadline."""
    error = failure_of(ollama, "answer-then-drip", timeout=1.0, calls=2)
    assert isinstance(error, LLMTimeout) and "within 1 s" in str(error), error


def test_calls_from_one_thread_reuse_one_connection_and_start_no_thread(monkeypatch):
    """A benchmark thread's calls share one kept-alive connection, and no call starts a thread
    of its own for its deadline (one watchdog thread serves the process)."""
    from sage_pddl.bench.fakellm import FakeOllama

    with FakeOllama(lambda messages, role: {"steps": []}, latency=0.0, capacity=2) as server:
        backend = OllamaBackend(model="fake", host=server.url, retries=0)
        backend.complete(MESSAGES)  # the watchdog starts with the process's first request
        started: list[str] = []
        start = threading.Thread.start
        monkeypatch.setattr(threading.Thread, "start",
                            lambda thread: started.append(thread.name) or start(thread))
        for _ in range(4):
            backend.complete(MESSAGES)
        monkeypatch.undo()
        backend.close()
        assert server.served == 5 and server.connections == 1
    assert started == []
