"""A small Ollama-API-compatible HTTP server for tests (stdlib `http.server`, one thread).

It listens on 127.0.0.1 on a port the OS picks and answers:
- `GET /api/version` -> `{"version": ...}`
- `GET /api/tags` -> the models it "has" (`models=` at construction)
- `POST /api/chat` (non-streaming) -> `{"model", "created_at", "message": {"role": "assistant",
  "content"}, "done": true, "done_reason": "stop", "prompt_eval_count", "eval_count"}`

Like a real server it answers 404 `{"error": "model 'x' not found"}` for a model it does not
have (`x` meaning `x:latest`). Each chat request takes the next scripted `Reply` from its queue
(`server.push(...)`), or
`default_reply` when the queue is empty. Modes: `Reply.ok(content)`, `Reply.missing_model()`,
`Reply.slow(seconds)` (sleeps before answering, to exceed a client timeout), `Reply.malformed()`
(non-JSON content), `Reply.empty()`, `Reply.server_error(500)`, `Reply.garbage()` (a body that is not
JSON), `Reply.counted(content)` (the server counts the prompt's tokens itself and truncates it
as Ollama does, below). Every request is recorded in `server.requests` (path, method and parsed
JSON body).

Truncation as Ollama does it: for a `Reply.counted` answer the server renders the messages with
a chat template, counts one token per `chars_per_token` characters, and when the count exceeds
the request's `options.num_ctx` (else `default_num_ctx`, Ollama's 4096) keeps the first
`NUM_KEEP` tokens and the last ones that fit, reports `prompt_eval_count` equal to the window, and
answers as if nothing happened. The text the model would have seen is kept in
`server.seen_prompts`.
"""
from __future__ import annotations

import collections
import json
import math
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer to POST /api/chat."""

    content: str = '{"ok": true}'
    status: int = 200
    error: str = ""
    delay: float = 0.0
    prompt_eval_count: int | None = 11
    eval_count: int | None = 7
    raw_body: bytes | None = None
    count_prompt: bool = False

    @classmethod
    def ok(cls, content: str, prompt_eval_count: int | None = 11,
           eval_count: int | None = 7) -> Reply:
        return cls(content=content, prompt_eval_count=prompt_eval_count, eval_count=eval_count)

    @classmethod
    def counted(cls, content: str = '{"ok": true}', eval_count: int = 7) -> Reply:
        return cls(content=content, prompt_eval_count=None, eval_count=eval_count,
                   count_prompt=True)

    @classmethod
    def missing_model(cls, model: str = "x") -> Reply:
        return cls(status=404, error=f"model '{model}' not found")

    @classmethod
    def slow(cls, seconds: float, content: str = '{"ok": true}') -> Reply:
        return cls(content=content, delay=seconds)

    @classmethod
    def malformed(cls) -> Reply:
        return cls(content="Sure! Here is the plan: pick up the apple.")

    @classmethod
    def empty(cls) -> Reply:
        return cls(content="", eval_count=0)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "llama runner process has terminated") \
            -> Reply:
        return cls(status=status, error=message)

    @classmethod
    def garbage(cls) -> Reply:
        return cls(raw_body=b"<html>not an ollama server</html>")


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    body: dict[str, Any] | None


@dataclass
class _State:
    models: list[str]
    default_reply: Reply
    queue: collections.deque = field(default_factory=collections.deque)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    chars_per_token: int = 3
    default_num_ctx: int = 4096
    seen_prompts: list[str] = field(default_factory=list)


NUM_KEEP = 4


def _template(messages: Any) -> str:
    """A ChatML-like rendering, as Ollama applies a model's template before counting."""
    return "".join(f"<|im_start|>{m.get('role')}\n{m.get('content')}<|im_end|>\n"
                   for m in messages if isinstance(m, dict)) + "<|im_start|>assistant\n"


def _evaluate(state: _State, body: dict[str, Any]) -> int:
    """The prompt's token count after Ollama's truncation; records the text kept."""
    prompt = _template(body.get("messages") or [])
    per = state.chars_per_token
    tokens = math.ceil(len(prompt) / per)
    window = int((body.get("options") or {}).get("num_ctx") or state.default_num_ctx)
    if tokens > window:  # keep NUM_KEEP tokens, drop the front of the rest
        prompt = prompt[:NUM_KEEP * per] + prompt[-(window - NUM_KEEP) * per:]
        tokens = window
    with state.lock:
        state.seen_prompts.append(prompt)
    return tokens


class FakeOllama:
    """Start with `with FakeOllama() as server:`; `server.host` is its base URL."""

    def __init__(self, models: list[str] | None = None, default_reply: Reply | None = None,
                 chars_per_token: int = 3, default_num_ctx: int = 4096):
        self.state = _State(models=list(models or ["tiny:latest"]),
                            default_reply=default_reply or Reply(),
                            chars_per_token=chars_per_token, default_num_ctx=default_num_ctx)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self.state))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True,
                                        name="fake-ollama")

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[Recorded]:
        with self.state.lock:
            return list(self.state.requests)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path == "/api/chat" and r.body is not None]

    @property
    def seen_prompts(self) -> list[str]:
        with self.state.lock:
            return list(self.state.seen_prompts)

    def push(self, *replies: Reply) -> None:
        with self.state.lock:
            self.state.queue.extend(replies)

    def start(self) -> FakeOllama:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.state.stopping.set()  # wakes handlers sleeping in a slow reply
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _tagged(model: str) -> str:
    """Like Ollama, a name without a tag means the `latest` tag."""
    return model if ":" in model else f"{model}:latest"


def _make_handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _send_json(self, status: int, payload: Any) -> None:
            self._send_bytes(status, json.dumps(payload).encode())

        def _send_bytes(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def _record(self, body: dict[str, Any] | None) -> None:
            with state.lock:
                state.requests.append(Recorded(self.command, self.path, body))

        def do_GET(self) -> None:
            self._record(None)
            if self.path == "/api/version":
                self._send_json(200, {"version": "0.0.0-fake"})
            elif self.path == "/api/tags":
                self._send_json(200, {"models": [
                    {"name": m, "model": m, "modified_at": "2024-01-01T00:00:00Z", "size": 1,
                     "digest": "0" * 64, "details": {}} for m in state.models]})
            else:
                self._send_json(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            self._record(body)
            if self.path != "/api/chat" or not isinstance(body, dict):
                self._send_json(404 if self.path != "/api/chat" else 400,
                                {"error": f"bad request to {self.path}"})
                return
            model = body.get("model", "")
            if _tagged(model) not in {_tagged(m) for m in state.models}:
                self._send_json(404, {"error": f"model '{model}' not found"})
                return
            with state.lock:
                reply = state.queue.popleft() if state.queue else state.default_reply
            if reply.delay and state.stopping.wait(reply.delay):
                return
            if reply.raw_body is not None:
                self._send_bytes(200, reply.raw_body)
            elif reply.status != 200:
                self._send_json(reply.status, {"error": reply.error})
            else:
                payload: dict[str, Any] = {
                    "model": model, "created_at": "2024-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": reply.content},
                    "done": True, "done_reason": "stop"}
                if reply.count_prompt:
                    payload["prompt_eval_count"] = _evaluate(state, body)
                elif reply.prompt_eval_count is not None:
                    payload["prompt_eval_count"] = reply.prompt_eval_count
                if reply.eval_count is not None:
                    payload["eval_count"] = reply.eval_count
                self._send_json(200, payload)

    return Handler
