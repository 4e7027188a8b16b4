"""The OpenAI-compatible backend against a tiny in-test /v1/chat/completions server (needs the
optional `openai` package; the missing-extra error is tested either way)."""
from __future__ import annotations

import json
import sys
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sage_pddl.llm import get_backend
from sage_pddl.llm.errors import (
    InvalidOutput,
    LLMConfigError,
    LLMServerError,
    LLMUnavailable,
    MissingDependency,
    ModelNotFound,
    PromptTooLong,
)

MESSAGES = [{"role": "user", "content": "plan it"}]


def test_missing_extra_tells_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingDependency, match=r"pip install 'sage-pddl\[openai\]'"):
        get_backend("openai", model="m", base_url="http://127.0.0.1:1/v1")


class TinyOpenAI:
    """Answers POST /v1/chat/completions from a queue of (status, content) pairs, and
    GET /v1/models with one model."""

    def __init__(self):
        self.replies: deque = deque()
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                owner.requests.append({"path": self.path, "auth": self.headers.get("Authorization")})
                found = self.path == "/v1/models"
                data = json.dumps({"object": "list", "data": [
                    {"id": "qwen", "object": "model", "created": 0, "owned_by": "me"}]}
                    if found else {"error": {"message": "not found"}}).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                status, content = owner.replies.popleft() if owner.replies else (200, "ok")
                if status == 200:
                    payload = {"id": "c1", "object": "chat.completion", "created": 0,
                               "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant",
                                                        "content": content}}],
                               "usage": {"prompt_tokens": 17, "completion_tokens": 4,
                                         "total_tokens": 21}}
                else:
                    payload = {"error": {"message": content, "type": "x", "code": None}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def tiny_openai():
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    server = TinyOpenAI()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_structured_request_and_usage(tiny_openai, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tiny_openai.replies.append((200, '{"steps": ["Find Apple"]}'))
    backend = get_backend("openai", model="qwen", host=tiny_openai.base_url)
    schema = {"title": "plan", "type": "object", "properties": {"steps": {"type": "array"}}}
    completion = backend.complete(MESSAGES, schema=schema, temperature=0.0, seed=11)
    assert completion.json() == {"steps": ["Find Apple"]}
    assert (completion.prompt_tokens, completion.output_tokens) == (17, 4)
    [request] = tiny_openai.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "qwen" and body["messages"] == MESSAGES
    assert body["seed"] == 11 and body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "plan", "schema": schema, "strict": False}}
    assert request["auth"].startswith("Bearer ")  # a placeholder key for a local endpoint


def test_api_key_from_the_environment(tiny_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    get_backend("openai", model="m", base_url=tiny_openai.base_url).complete(MESSAGES)
    assert tiny_openai.requests[0]["auth"] == "Bearer sk-test-123"


def test_errors_map_to_llm_errors(tiny_openai, sleeps):
    backend = get_backend("openai", model="m", base_url=tiny_openai.base_url, sleep=sleeps)
    tiny_openai.replies.extend([(404, "The model `m` does not exist")])
    with pytest.raises(ModelNotFound, match="GET .*/models"):
        backend.complete(MESSAGES)
    tiny_openai.replies.extend([(500, "boom"), (200, "not json"), (200, "not json")])
    with pytest.raises(InvalidOutput, match="after 3 attempts"):
        backend.complete(MESSAGES, schema={"type": "object"})
    assert sleeps.delays == [0.5, 1.0]
    tiny_openai.replies.extend([(503, "overloaded")] * 3)
    with pytest.raises(LLMServerError, match="HTTP 503"):
        backend.complete(MESSAGES)


def test_a_prompt_over_the_servers_window_is_a_prompt_too_long(tiny_openai, sleeps):
    backend = get_backend("openai", model="m", base_url=tiny_openai.base_url, sleep=sleeps)
    tiny_openai.replies.append((400, "This model's maximum context length is 4096 tokens. "
                                     "However, you requested 5000 tokens."))
    with pytest.raises(PromptTooLong, match="maximum context length is 4096"):
        backend.complete(MESSAGES)
    assert len(tiny_openai.requests) == 1 and not sleeps.delays


def test_unreachable_endpoint(closed_port_host, sleeps):
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    backend = get_backend("openai", model="m", base_url=closed_port_host + "/v1", retries=1,
                          sleep=sleeps)
    with pytest.raises(LLMUnavailable, match="cannot reach"):
        backend.complete(MESSAGES)
    assert sleeps.delays == [0.5]


def test_check_fails_at_once_when_no_server_answers(closed_port_host):
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    backend = get_backend("openai", model="m", base_url=closed_port_host + "/v1")
    with pytest.raises(LLMUnavailable, match="cannot reach the OpenAI-compatible endpoint"):
        backend.check()


def test_check_asks_the_servers_model_listing(tiny_openai):
    get_backend("openai", model="any-name", base_url=tiny_openai.base_url).check()
    assert [r["path"] for r in tiny_openai.requests] == ["/v1/models"]
    without_v1 = tiny_openai.base_url.removesuffix("/v1")
    with pytest.raises(LLMUnavailable, match="ends in /v1"):
        get_backend("openai", model="m", base_url=without_v1).check()


def test_needs_a_key_for_the_default_endpoint(monkeypatch):
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        get_backend("openai", model="gpt-4o-mini")
