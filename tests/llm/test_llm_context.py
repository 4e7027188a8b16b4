"""The context window of Ollama requests (llm/context.py): sized from the prompt, checked against
the server's own count, against a stand-in server that truncates prompts as Ollama does."""
from __future__ import annotations

import pytest

from sage_pddl.llm.context import (
    ANSWER_TOKENS,
    MIN_CONTEXT,
    ContextWindow,
    prompt_token_bound,
)
from sage_pddl.llm.counter import CallCounter
from sage_pddl.llm.errors import LLMConfigError, PromptTooLong
from sage_pddl.llm.ollama import OllamaBackend

from .fake_ollama import FakeOllama, Reply

SYSTEM = "SYSTEM-START You plan in the kitchen domain. " + "Actions: Pick, Place, Open. " * 20


def messages(user_chars: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Task: " + "x" * user_chars}]


def test_the_window_is_sized_from_the_prompt_and_only_grows(fake_ollama):
    fake_ollama.push(Reply.counted(), Reply.counted(), Reply.counted())
    backend = OllamaBackend(model="tiny", host=fake_ollama.host)
    backend.complete(messages(100))
    backend.complete(messages(20_000))
    backend.complete(messages(100))
    windows = [r["options"]["num_ctx"] for r in fake_ollama.chat_requests()]
    long_bound = prompt_token_bound(messages(20_000)) + ANSWER_TOKENS
    assert windows[0] == MIN_CONTEXT
    assert windows[1] >= long_bound and windows[1] < 2 * long_bound
    assert windows[2] == windows[1]  # a smaller num_ctx would make Ollama reload the model


def test_the_stand_in_cuts_a_prompt_longer_than_its_window_from_the_front():
    with FakeOllama(models=["tiny"], default_reply=Reply.counted()) as server:
        backend = OllamaBackend(model="tiny", host=server.host, options={"num_ctx": 256},
                                retries=0)
        with pytest.raises(PromptTooLong):
            backend.complete(messages(3000))
        [seen] = server.seen_prompts
    assert "SYSTEM-START" not in seen and len(seen) == 256 * 3


def test_a_prompt_the_server_cut_fails_the_call_with_the_counts():
    # A tokenizer three times denser than the bound assumes: the window sent is too small,
    # the server truncates silently, and its own count gives it away.
    with FakeOllama(models=["tiny"], default_reply=Reply.counted(),
                    chars_per_token=1) as server:
        backend = CallCounter(OllamaBackend(model="tiny", host=server.host, retries=2))
        with pytest.raises(PromptTooLong) as raised:
            backend.complete(messages(12_000))
        [request] = server.chat_requests()  # not retried: it would not fit the next time
    window = request["options"]["num_ctx"]
    message = str(raised.value)
    assert f"counted {window} prompt tokens for num_ctx={window}" in message
    assert "cut it from the front" in message and server.host in message
    assert backend.usage().failures == 1 and backend.usage().prompt_tokens == window


def test_a_prompt_above_the_cap_is_sent_at_the_cap_and_judged_by_the_count(fake_ollama):
    fake_ollama.push(Reply.counted(), Reply.counted())
    backend = OllamaBackend(model="tiny", host=fake_ollama.host, max_context=2048, retries=0)
    fits = backend.complete(messages(2000))  # bound ~2.3k tokens with the answer; ~0.9k counted
    assert fake_ollama.chat_requests()[0]["options"]["num_ctx"] == 2048
    assert fits.prompt_tokens < 2048 - ANSWER_TOKENS
    with pytest.raises(PromptTooLong, match="--max-context"):
        backend.complete(messages(9000))


def test_an_answer_that_would_push_the_prompt_out_also_fails(fake_ollama):
    fake_ollama.push(Reply.ok("{}", prompt_eval_count=2000))
    backend = OllamaBackend(model="tiny", host=fake_ollama.host, options={"num_ctx": 2048},
                            retries=0)
    with pytest.raises(PromptTooLong, match="kept for the answer"):
        backend.complete(messages(10))


def test_no_count_cannot_be_checked_and_is_not_a_failure(fake_ollama):
    fake_ollama.push(Reply.ok('{"ok": true}', prompt_eval_count=0))
    completion = OllamaBackend(model="tiny", host=fake_ollama.host).complete(messages(10))
    assert completion.estimated_tokens


def test_a_cut_prompt_makes_a_failed_plan_not_a_crash():
    from sage_pddl.planners import get_planner
    from sage_pddl.planners.base import PlanningTask
    from sage_pddl.tasks import load_task

    with FakeOllama(models=["tiny"], default_reply=Reply.counted('{"steps": []}'),
                    chars_per_token=1) as server:
        task = PlanningTask.from_task(load_task("ithor#K01"), _ithor())
        planner = get_planner("Direct", llm=OllamaBackend(model="tiny", host=server.host,
                                                           max_context=1024, retries=0))
        result = planner.plan(task)
    assert not result.steps and any("PromptTooLong" in note for note in result.notes)


def _ithor():
    from sage_pddl.domains import load_domain

    return load_domain("ithor")


@pytest.mark.parametrize("bad", [0, -5, "many", 1.5])
def test_bad_window_settings_name_the_setting(bad):
    with pytest.raises(LLMConfigError, match="max_context"):
        ContextWindow(max_context=bad)
