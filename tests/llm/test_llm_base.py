"""The protocol's values, output checks, retries and per-role accounting."""
from __future__ import annotations

import dataclasses

import pytest

from sage_pddl.llm.base import Completion, LLMBackend, estimate_tokens, normalize_messages
from sage_pddl.llm.counter import CallCounter
from sage_pddl.llm.errors import (
    InvalidOutput,
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    MissingDependency,
    ModelNotFound,
)
from sage_pddl.llm.output import check_output
from sage_pddl.llm.retry import Attempt, RetryPolicy, complete_with_retries
from sage_pddl.llm.scripted import ScriptedBackend
from sage_pddl.llm.usage import Usage
from sage_pddl.pddl.errors import SageError

USER = [{"role": "user", "content": "plan please"}]


def test_completion_is_frozen_and_parses_json():
    completion = Completion('{"steps": [1, 2]}', 3, 4, 0.5)
    assert completion.json() == {"steps": [1, 2]}
    assert completion.total_tokens == 7 and completion.retries == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        completion.text = "x"  # type: ignore[misc]
    with pytest.raises(InvalidOutput, match="not JSON"):
        Completion("pick up apple", 1, 1, 0.0).json()


def test_every_llm_error_is_a_sage_error():
    for error_class in (LLMError, LLMUnavailable, LLMTimeout, InvalidOutput, LLMServerError,
                        LLMConfigError):
        assert issubclass(error_class, SageError)
    missing = ModelNotFound("qwen2.5:7b", "http://h:11434")
    assert isinstance(missing, SageError)
    assert "ollama pull qwen2.5:7b" in str(missing) and "http://h:11434" in str(missing)
    extra = MissingDependency("openai", "openai", "openai")
    assert "pip install 'sage-pddl[openai]'" in str(extra)


def test_usage_adds_and_subtracts():
    a = Usage(calls=2, retries=1, prompt_tokens=10, output_tokens=5, seconds=1.5)
    b = Usage(calls=1, failures=1, prompt_tokens=3, output_tokens=0, seconds=0.5)
    total = a + b
    assert (total.calls, total.failures, total.retries, total.total_tokens) == (3, 1, 1, 18)
    assert total - b == a
    assert total.to_dict()["total_tokens"] == 18


@pytest.mark.parametrize("messages, fragment", [
    ("hello", "list"),
    ([], "empty"),
    ([{"role": "robot", "content": "x"}], "role 'robot'"),
    ([{"role": "user"}], "content"),
    (["plain string"], "mapping"),
])
def test_malformed_messages_are_config_errors(messages, fragment):
    with pytest.raises(LLMConfigError, match=fragment):
        normalize_messages(messages)


def test_check_output_rules():
    assert check_output("free text", None) == "free text"
    assert check_output('{"a": 1}', {"type": "object"}) == '{"a": 1}'
    # Endpoints without structured output wrap JSON in a fence; the caller gets bare JSON.
    assert check_output('```json\n{"a": 1}\n```', {"type": "object"}) == '{"a": 1}'
    with pytest.raises(InvalidOutput, match="empty"):
        check_output("  \n", None)
    with pytest.raises(InvalidOutput, match="not JSON"):
        check_output("Sure, here you go: {a: 1}", {"type": "object"})


def test_retry_policy_backs_off_exponentially_and_caps():
    policy = RetryPolicy(retries=5, backoff=0.5, factor=2.0, max_delay=3.0)
    assert [policy.delay(k) for k in range(4)] == [0.5, 1.0, 2.0, 3.0]
    with pytest.raises(LLMConfigError):
        RetryPolicy(retries=-1)


def _sender(*outcomes):
    """A `send` that returns or raises the given outcomes in order, counting its calls."""
    queue = list(outcomes)
    calls = []

    def send():
        calls.append(1)
        outcome = queue.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    return send, calls


def test_retries_transient_failures_then_sums_tokens(sleeps):
    send, calls = _sender(LLMUnavailable("down"), Attempt("", 10, 0), Attempt('{"x": 1}', 10, 4))
    completion = complete_with_retries(send, USER, {"type": "object"},
                                       RetryPolicy(retries=2, backoff=0.25), sleep=sleeps)
    assert completion.text == '{"x": 1}'
    assert len(calls) == 3 and completion.attempts == 3 and completion.retries == 2
    # The connection failure spent nothing; the empty answer spent its prompt.
    assert (completion.prompt_tokens, completion.output_tokens) == (20, 4)
    assert sleeps.delays == [0.25, 0.5]
    assert not completion.estimated_tokens


def test_gives_up_after_the_retry_budget_with_usage(sleeps):
    send, calls = _sender(*[Attempt("not json", 5, 2)] * 3)
    with pytest.raises(InvalidOutput, match="after 3 attempts") as raised:
        complete_with_retries(send, USER, {"type": "object"}, RetryPolicy(retries=2),
                              sleep=sleeps)
    assert len(calls) == 3
    usage = raised.value.usage
    assert (usage.calls, usage.failures, usage.retries) == (1, 1, 2)
    assert (usage.prompt_tokens, usage.output_tokens) == (15, 6)


@pytest.mark.parametrize("error", [LLMTimeout("slow"), ModelNotFound("m", "h"),
                                   LLMError("bad request")])
def test_permanent_failures_are_not_retried(error, sleeps):
    send, calls = _sender(error, Attempt("ok", 1, 1))
    with pytest.raises(type(error)):
        complete_with_retries(send, USER, None, RetryPolicy(retries=2), sleep=sleeps)
    assert len(calls) == 1 and sleeps.delays == []


def test_missing_or_zero_counts_are_estimated_and_marked(sleeps):
    messages = [{"role": "user", "content": "x" * 40}]
    send, _ = _sender(Attempt("y" * 8, 0, None))
    completion = complete_with_retries(send, messages, None, RetryPolicy(), sleep=sleeps)
    assert completion.estimated_tokens
    assert completion.prompt_tokens == estimate_tokens("x" * 40) == 10
    assert completion.output_tokens == 2


def test_call_counter_books_per_role_including_failures():
    inner = ScriptedBackend({"decompose": ["a b c", InvalidOutput("junk")], "expand": ["d"]})
    counter = CallCounter(inner)
    assert isinstance(counter, LLMBackend)
    counter.complete(USER, role="decompose")
    counter.complete(USER, role="expand")
    with pytest.raises(InvalidOutput):
        counter.complete(USER, role="decompose")
    decompose = counter.usage("decompose")
    assert (decompose.calls, decompose.failures) == (2, 1)
    assert decompose.output_tokens == 3 and decompose.prompt_tokens == 2
    assert counter.usage("expand") == Usage(calls=1, prompt_tokens=2, output_tokens=1)
    total = counter.usage()
    assert (total.calls, total.failures, total.prompt_tokens, total.output_tokens) == (3, 1, 4, 4)
    assert set(counter.by_role()) == {"decompose", "expand"}
    counter.reset()
    assert counter.usage() == Usage()


def test_call_counter_keeps_the_tokens_a_failed_call_spent():
    class Failing:
        name, model = "failing", "m"

        def complete(self, messages, schema=None, temperature=0.2, seed=None, role=None):
            raise InvalidOutput("junk", usage=Usage(calls=1, failures=1, retries=2,
                                                    prompt_tokens=30, output_tokens=9,
                                                    seconds=1.0))

    counter = CallCounter(Failing())
    with pytest.raises(InvalidOutput):
        counter.complete(USER)
    usage = counter.usage(CallCounter.UNNAMED_ROLE)
    assert (usage.calls, usage.failures, usage.retries) == (1, 1, 2)
    assert (usage.prompt_tokens, usage.output_tokens, usage.seconds) == (30, 9, 1.0)


@pytest.mark.parametrize("error", [
    ModelNotFound("m:7b", "http://h:1", usage=Usage(calls=1, failures=1)),
    MissingDependency("local", "llama-cpp-python", "local"),
    InvalidOutput("junk", usage=Usage(calls=1, prompt_tokens=3)),
])
def test_errors_survive_pickling_for_worker_processes(error):
    import pickle

    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert copy.usage == error.usage
