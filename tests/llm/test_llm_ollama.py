"""The Ollama backend with the real `ollama` client against the fake server in fake_ollama.py."""
from __future__ import annotations

import json

import pytest

from sage_pddl.llm import get_backend
from sage_pddl.llm.counter import CallCounter
from sage_pddl.llm.errors import (
    InvalidOutput,
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
)
from sage_pddl.llm.ollama import (
    DEFAULT_HOST,
    OllamaBackend,
    is_available,
    list_models,
    normalize_host,
    resolve_host,
)

from .fake_ollama import Reply

PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}},
               "required": ["steps"]}
MESSAGES = [{"role": "system", "content": "You plan."},
            {"role": "user", "content": "Put the apple in the fridge."}]


def backend(server, **options):
    return OllamaBackend(model="tiny", host=server.host, **options)


def test_success_sends_schema_seed_and_temperature(fake_ollama):
    fake_ollama.push(Reply.ok('{"steps": ["Find Apple"]}', prompt_eval_count=42, eval_count=9))
    completion = backend(fake_ollama).complete(MESSAGES, schema=PLAN_SCHEMA, temperature=0.7,
                                               seed=1234)
    assert completion.json() == {"steps": ["Find Apple"]}
    assert (completion.prompt_tokens, completion.output_tokens) == (42, 9)
    assert completion.attempts == 1 and not completion.estimated_tokens
    assert completion.model == "tiny" and completion.seconds > 0
    [request] = fake_ollama.chat_requests()
    assert request["model"] == "tiny" and request["stream"] is False
    assert request["format"] == PLAN_SCHEMA
    assert request["options"] == {"num_ctx": 2048, "temperature": 0.7, "seed": 1234}
    assert request["messages"] == MESSAGES


def test_free_text_request_has_no_format_and_no_seed(fake_ollama):
    fake_ollama.push(Reply.ok("Find Apple, Pick Apple"))
    completion = backend(fake_ollama, options={"num_ctx": 8192}).complete(MESSAGES)
    assert completion.text == "Find Apple, Pick Apple"
    [request] = fake_ollama.chat_requests()
    assert "format" not in request or request["format"] in (None, "")
    assert request["options"] == {"num_ctx": 8192, "temperature": 0.2}


def test_prompt_cache_hit_falls_back_to_an_estimate(fake_ollama):
    fake_ollama.push(Reply.ok("x" * 20, prompt_eval_count=0, eval_count=None))
    completion = backend(fake_ollama).complete([{"role": "user", "content": "y" * 40}])
    assert completion.estimated_tokens
    assert (completion.prompt_tokens, completion.output_tokens) == (10, 5)


def test_server_down_names_host_and_ollama_serve(closed_port_host, sleeps):
    down = OllamaBackend(model="tiny", host=closed_port_host, retries=2, backoff=0.1,
                         sleep=sleeps)
    with pytest.raises(LLMUnavailable) as raised:
        down.complete(MESSAGES)
    message = str(raised.value)
    assert closed_port_host in message and "ollama serve" in message
    assert sleeps.delays == [0.1, 0.2]  # two retries, exponential back-off
    assert raised.value.usage.retries == 2


def test_missing_model_suggests_ollama_pull(fake_ollama, sleeps):
    missing = OllamaBackend(model="llama3.3:70b", host=fake_ollama.host, sleep=sleeps)
    with pytest.raises(ModelNotFound) as raised:
        missing.complete(MESSAGES)
    assert "ollama pull llama3.3:70b" in str(raised.value)
    assert raised.value.model == "llama3.3:70b" and raised.value.host == fake_ollama.host
    assert len(fake_ollama.chat_requests()) == 1 and sleeps.delays == []  # not retried


def test_scripted_404_is_model_not_found(fake_ollama):
    fake_ollama.push(Reply.missing_model("tiny"))
    with pytest.raises(ModelNotFound, match="ollama pull tiny"):
        backend(fake_ollama).complete(MESSAGES)


def test_timeout_is_llm_timeout_and_not_retried(fake_ollama, sleeps):
    fake_ollama.push(Reply.slow(5.0))
    slow = backend(fake_ollama, timeout=0.3, sleep=sleeps)
    with pytest.raises(LLMTimeout, match="within 0.3 s") as raised:
        slow.complete(MESSAGES)
    assert sleeps.delays == []
    assert 0.25 < raised.value.usage.seconds < 3.0


def test_malformed_output_is_retried_then_invalid_output(fake_ollama, sleeps):
    fake_ollama.push(Reply.malformed(), Reply.empty(), Reply.malformed())
    with pytest.raises(InvalidOutput, match="after 3 attempts") as raised:
        backend(fake_ollama, sleep=sleeps).complete(MESSAGES, schema=PLAN_SCHEMA)
    assert len(fake_ollama.chat_requests()) == 3
    assert sleeps.delays == [0.5, 1.0]
    usage = raised.value.usage
    assert (usage.failures, usage.retries, usage.prompt_tokens) == (1, 2, 33)


def test_retry_recovers_and_counts_attempts(fake_ollama, sleeps):
    fake_ollama.push(Reply.empty(), Reply.server_error(500), Reply.ok('{"steps": []}'))
    counter = CallCounter(backend(fake_ollama, sleep=sleeps))
    completion = counter.complete(MESSAGES, schema=PLAN_SCHEMA, role="decompose")
    assert completion.json() == {"steps": []}
    assert completion.attempts == 3 and len(fake_ollama.chat_requests()) == 3
    usage = counter.usage("decompose")
    assert (usage.calls, usage.retries, usage.failures) == (1, 2, 0)
    # The empty answer and the good one were both paid for; the 500 was not.
    assert usage.prompt_tokens == 22


def test_free_text_non_json_is_fine_without_schema(fake_ollama):
    fake_ollama.push(Reply.malformed())
    assert backend(fake_ollama).complete(MESSAGES).text.startswith("Sure!")


def test_server_errors_after_retries(fake_ollama, sleeps):
    fake_ollama.push(*[Reply.server_error(500)] * 2)
    with pytest.raises(LLMServerError, match="HTTP 500"):
        backend(fake_ollama, retries=1, sleep=sleeps).complete(MESSAGES)
    assert len(fake_ollama.chat_requests()) == 2


def test_a_reply_that_is_not_ollama_is_a_server_error(fake_ollama, sleeps):
    fake_ollama.push(Reply.garbage())
    with pytest.raises(LLMServerError, match="not Ollama"):
        backend(fake_ollama, retries=0, sleep=sleeps).complete(MESSAGES)


def test_bad_request_is_not_retried(fake_ollama, sleeps):
    fake_ollama.push(Reply.server_error(400, "invalid format"))
    with pytest.raises(LLMError, match="HTTP 400") as raised:
        backend(fake_ollama, sleep=sleeps).complete(MESSAGES)
    assert type(raised.value) is LLMError and sleeps.delays == []


def test_list_models_is_available_and_check(fake_ollama, closed_port_host):
    assert list_models(fake_ollama.host) == ["tiny:latest", "other:7b"]
    assert is_available(fake_ollama.host) and not is_available(closed_port_host)
    backend(fake_ollama).check()  # `tiny` is `tiny:latest`
    with pytest.raises(ModelNotFound, match="ollama pull other:13b"):
        OllamaBackend(model="other:13b", host=fake_ollama.host).check()
    with pytest.raises(LLMUnavailable, match="ollama serve"):
        list_models(closed_port_host)


@pytest.mark.parametrize("given, expected", [
    ("localhost", "http://localhost:11434"),
    ("gpu-box:8080/", "http://gpu-box:8080"),
    ("10.0.0.5", "http://10.0.0.5:11434"),
    ("https://ollama.example.org/", "https://ollama.example.org"),
    ("  http://127.0.0.1:11434  ", "http://127.0.0.1:11434"),
    (":9999", "http://localhost:9999"),
    ("", DEFAULT_HOST),
])
def test_host_normalisation(given, expected):
    assert normalize_host(given) == expected


def test_host_comes_from_option_then_env_then_default(monkeypatch, fake_ollama):
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")
    assert resolve_host() == "http://gpu-box:11434"
    assert resolve_host("other:1") == "http://other:1"
    monkeypatch.delenv("OLLAMA_HOST")
    assert resolve_host() == DEFAULT_HOST
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host.removeprefix("http://"))
    assert OllamaBackend(model="tiny").complete(MESSAGES).text == '{"ok": true}'


def test_registry_builds_it_from_cli_style_options(fake_ollama):
    built = get_backend("ollama", model="tiny", host=fake_ollama.host)
    assert isinstance(built, OllamaBackend) and built.host == fake_ollama.host


@pytest.mark.parametrize("options, fragment", [
    ({"timeout": 0}, "timeout"), ({"timeout": "soon"}, "timeout"), ({"retries": -1}, "retries"),
    ({"model": "  "}, "model")])
def test_bad_options_are_config_errors(options, fragment):
    with pytest.raises(LLMConfigError, match=fragment):
        OllamaBackend(**{"model": "tiny", **options})


def test_schema_must_be_a_dict_or_json(fake_ollama):
    with pytest.raises(LLMConfigError, match="schema"):
        backend(fake_ollama).complete(MESSAGES, schema=json.dumps(PLAN_SCHEMA))
