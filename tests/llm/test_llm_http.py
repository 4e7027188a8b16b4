"""Every HTTP call to an LLM server has a total deadline and a bounded answer
(`sage_pddl/llm/http.py`), against a server that drips its answer or never ends it.

A call used to time out only when one read waited longer than the timeout (a server answering
a byte at a time was waited on for ever) and read any body whole (3 GB in 8 s from an
endless one). Each call here runs in a thread joined with a generous bound, so a call that
hangs fails the test instead of hanging the run."""
from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sage_pddl.llm import http
from sage_pddl.llm.errors import LLMError, LLMTimeout
from sage_pddl.llm.http import AnswerTooLarge
from sage_pddl.llm.ollama import OllamaBackend

MESSAGES = [{"role": "user", "content": "Put the apple in the fridge."}]


def chat_answer(path: str, content: str = '{"steps": []}') -> bytes:
    """A chat reply to `path` as Ollama's API or the OpenAI-compatible one words it."""
    if path.endswith("/chat/completions"):
        return json.dumps({"id": "c1", "object": "chat.completion", "created": 0,
                           "model": "tiny", "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant",
                                                                     "content": content}}],
                           "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                     "total_tokens": 5}}).encode()
    return json.dumps({"model": "tiny", "done": True,
                       "message": {"role": "assistant", "content": content}}).encode()


def encoded(mode: str, path: str) -> tuple[str, bytes]:
    """The Content-Encoding and body a server in an encoding `mode` sends: `gzip-bomb`
    (16 MiB of spaces in about 16 KB), `gzip-answer`, `deflate-answer` (zlib's wrapping),
    `raw-deflate-answer` (none), `br` (an encoding never asked for)."""
    if mode == "gzip-bomb":
        return "gzip", gzip.compress(b" " * (16 << 20), compresslevel=9)
    if mode == "gzip-answer":
        return "gzip", gzip.compress(chat_answer(path))
    if mode == "deflate-answer":
        return "deflate", zlib.compress(chat_answer(path))
    if mode == "raw-deflate-answer":
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        return "deflate", packer.compress(chat_answer(path)) + packer.flush()
    return "br", b"\x8b\x03\x80{}\x03"


class HostileServer:
    """Answers every GET and POST per `mode`: `drip` (headers, then one body byte every 20 ms
    for ever), `drip-headers` (the status line a byte at a time), `huge` (a 1 MiB body),
    `answer-then-drip` (a chat answer to the first request, kept alive, then `drip`), or an
    encoded body (`encoded`). `accepted` keeps each request's Accept-Encoding."""

    def __init__(self, mode: str):
        stopping = self.stopping = threading.Event()
        answered: list[str] = []
        accepted = self.accepted = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answered.append(self.path)
                accepted.append(self.headers.get("Accept-Encoding"))
                try:
                    if mode.endswith(("-answer", "-bomb")) or mode == "br":
                        encoding, body = encoded(mode, self.path)
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Encoding", encoding)
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                    if mode == "answer-then-drip" and len(answered) == 1:
                        body = chat_answer(self.path)
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

            do_GET = do_POST

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


def answer_of(make: Callable[[str, float], Any], mode: str) -> tuple[str, list[str | None]]:
    """One call's answer from a server in `mode`, and the Accept-Encoding it was asked with."""
    server = HostileServer(mode)
    try:
        return make(server.url, 30.0).complete(MESSAGES).text, server.accepted
    finally:
        server.stop()


def test_a_compressed_answer_is_limited_by_its_decoded_size(make):
    """A gzip bomb (16 MiB in about 16 KB) passed a limit on the bytes received, and the HTTP
    library undid it whole: the limit counts the bytes it undoes to."""
    error = failure_of(make, "gzip-bomb", timeout=30.0)
    assert isinstance(error, AnswerTooLarge) and "more than 8,388,608 bytes" in str(error), error


@pytest.mark.parametrize("mode", ["gzip-answer", "deflate-answer", "raw-deflate-answer"])
def test_answers_are_asked_for_uncompressed_and_read_when_compressed_all_the_same(make, mode):
    text, accepted = answer_of(make, mode)
    assert text == '{"steps": []}'
    assert accepted == ["identity"]


def test_an_encoding_never_asked_for_is_refused(make):
    error = failure_of(make, "br", timeout=30.0)
    assert "encoded as 'br', which was not asked for" in str(error), error


def in_bounded_time(call: Callable[[], Any]) -> Any:
    """`call()`'s result, in a thread joined with a generous bound (a hang fails the test)."""
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the call did not end"
    return outcome[0]


@pytest.mark.parametrize("mode", ["drip", "drip-headers", "huge", "gzip-bomb"])
def test_the_availability_check_has_a_deadline_and_a_bounded_answer(mode, monkeypatch):
    """`--llm auto` asks the default port first, where any local process may listen: a
    listing dripped for ever, or longer than the limit, is no server (a plain GET had no
    deadline and no limit)."""
    from sage_pddl.cli.demo import SCRIPT_LABEL, choose_llm
    from sage_pddl.llm.ollama import is_available

    monkeypatch.setattr(http, "MAX_ANSWER_BYTES", 64 * 1024)
    server = HostileServer(mode)
    try:
        assert in_bounded_time(lambda: is_available(server.url, timeout=1.0)) is False
        _, label = in_bounded_time(lambda: choose_llm("auto", "tiny", server.url))
        assert label.startswith(SCRIPT_LABEL)
    finally:
        server.stop()


def test_a_server_check_ends_at_its_own_shorter_deadline(monkeypatch):
    """The OpenAI-compatible backend's `check()` waits `CHECK_TIMEOUT` for the model listing,
    not the chat calls' timeout: the transport's deadline is the request's own when shorter."""
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    from sage_pddl.llm import openai_compat

    monkeypatch.setattr(openai_compat, "CHECK_TIMEOUT", 1.0)
    server = HostileServer("drip")
    try:
        backend = openai(server.url, 600.0)
        error = in_bounded_time(lambda: pytest.raises(LLMError, backend.check).value)
    finally:
        server.stop()
    assert isinstance(error, LLMTimeout) and "within 1 s" in str(error), error
