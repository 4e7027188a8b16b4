"""An Ollama-compatible stand-in server for timing and fault tests of the benchmark harness.

`FakeOllama(responder, latency=0.2, capacity=4)` serves Ollama's chat API on 127.0.0.1 (a free
port unless one is given) from a background thread. `POST /api/chat` waits for one of
`capacity` slots, like a server started with `OLLAMA_NUM_PARALLEL=capacity` (requests beyond it
queue), sleeps `latency` seconds in the slot, and answers with `responder(messages, role)`: by
default the reference responder of `oracle.py`, which is NOT a model. Its answers are the tasks'
reference plans, so a grid run against it measures the harness (concurrency, routing,
resumption), not planning. `GET /api/tags` lists the one model; `GET /` says it is running.

The chat API carries no planner role, so the server reads it from the system prompt's role
sentence (`ROLE_MARKERS`); a request with none gets the responder's default answer (a whole
plan), as `direct`, `cot` and `fewshot` do. `stop()` closes the port, so later requests are
refused, as with a server that died; `served`, `peak` (the most requests in a slot at once) and
`in_slot` tell a test what happened. Requests larger than `MAX_BODY` bytes get HTTP 413.
Like Ollama it speaks HTTP/1.1 and keeps a client's connection open from request to request
(`connections` counts those it accepted); `stop()` shuts them down too.

Like Ollama it evaluates a prompt in the request's `options.num_ctx` tokens (else
`DEFAULT_NUM_CTX`) and cuts a longer one silently: its token count (one per word) is then the
window, as Ollama's `prompt_eval_count` is, and the answer is an empty plan, `{"steps": []}`
(the responder cannot tell the task from what is left; `truncated` counts these requests).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sage_pddl.planners.prompts import (
    DECOMPOSE_ROLE,
    EXPAND_ROLE,
    REACT_ROLE,
    REFINE_ROLE,
    REPAIR_ROLE,
)

Responder = Callable[[Sequence[Mapping[str, str]], str | None], Any]

MAX_BODY = 4 * 1024 * 1024
DEFAULT_NUM_CTX = 4096


def _opening(role_text: str) -> str:
    return role_text.split(".", 1)[0] + "."


ROLE_MARKERS: tuple[tuple[str, str], ...] = (
    (_opening(DECOMPOSE_ROLE), "decompose"),
    (_opening(EXPAND_ROLE), "expand"),
    (_opening(REFINE_ROLE), "refine"),
    (_opening(REPAIR_ROLE), "repair"),
    (_opening(REACT_ROLE), "act"),
    ("You rate the next step of a plan.", "score"),
    ("You translate a task into a PDDL goal.", "goal"),
    ("You review plans.", "critique"),
)
"""(sentence of a role's system prompt, role): how a chat request reveals its planner role."""


def role_of(messages: Sequence[Mapping[str, str]]) -> str | None:
    """The planner role that wrote `messages`, read from its system prompt (None: unknown)."""
    system = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    for marker, role in ROLE_MARKERS:
        if marker in system:
            return role
    return None


class FakeOllama:
    """See the module docstring. Use as a context manager, or call `start()` and `stop()`."""

    def __init__(self, responder: Responder, *, latency: float = 0.2, capacity: int = 4,
                 model: str = "fake", port: int = 0):
        self.responder = responder
        self.latency = float(latency)
        self.capacity = int(capacity)
        self.model = model
        self._slots = threading.BoundedSemaphore(self.capacity)
        self._count = threading.Lock()
        self._connections: set[socket.socket] = set()  # open client connections, under _count
        self.served = 0
        self.in_slot = 0
        self.peak = 0
        self.connections = 0
        self.truncated = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> FakeOllama:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name=f"fake-ollama-{self.url}")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._count:
            connections = list(self._connections)
        for connection in connections:  # a kept-alive connection would outlive the port
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The chat reply to one request body, after waiting for a slot and the latency."""
        messages = request.get("messages")
        if not isinstance(messages, list):
            raise ValueError("'messages' must be a list")
        window = int((request.get("options") or {}).get("num_ctx") or DEFAULT_NUM_CTX)
        words = " ".join(str(m.get("content", "")) for m in messages).split()
        if len(words) > window:  # Ollama would cut this prompt (keeping its first 4 tokens)
            with self._count:
                self.truncated += 1
        with self._slots:
            with self._count:
                self.in_slot += 1
                self.peak = max(self.peak, self.in_slot)
            try:
                time.sleep(self.latency)
                answer = (self.responder(messages, role_of(messages))
                          if len(words) <= window else {"steps": []})
            finally:
                with self._count:
                    self.in_slot -= 1
                    self.served += 1
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return {"model": request.get("model", self.model),
                "created_at": datetime.now(UTC).isoformat(),
                "message": {"role": "assistant", "content": text}, "done": True,
                "done_reason": "stop", "prompt_eval_count": max(1, min(len(words), window)),
                "eval_count": max(1, len(text.split()))}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # connections kept alive, as by Ollama
            disable_nagle_algorithm = True  # as Go's servers: a reply is not held back

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server._count:
                    server._connections.add(self.connection)
                    server.connections += 1

            def finish(self) -> None:
                with server._count:
                    server._connections.discard(self.connection)
                super().finish()

            def _send(self, status: int, body: Mapping[str, Any] | str) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/api/tags":
                    self._send(200, {"models": [{"name": server.model, "model": server.model}]})
                else:
                    self._send(200, "Ollama is running")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self.close_connection = True  # its body is left unread
                    self._send(413, {"error": f"request body over {MAX_BODY} bytes"})
                    return
                body = self.rfile.read(length)
                if self.path.rstrip("/") != "/api/chat":
                    self._send(404, {"error": f"no endpoint {self.path}"})
                    return
                try:
                    request = json.loads(body or b"{}")
                    reply = server.answer(request)
                except Exception as error:  # the client sees a 500, as from a failing server
                    self._send(500, {"error": f"{type(error).__name__}: {error}"})
                    return
                self._send(200, reply)

        return Handler
