"""The scripted backend: per-role scripts, responders, exact token counts, call records."""
from __future__ import annotations

import json

import pytest

from sage_pddl.llm import get_backend
from sage_pddl.llm.counter import CallCounter
from sage_pddl.llm.errors import LLMConfigError, LLMTimeout
from sage_pddl.llm.scripted import ScriptedBackend, ScriptExhausted

SYSTEM = {"role": "system", "content": "You are a planner."}


def ask(text):
    return [SYSTEM, {"role": "user", "content": text}]


def test_roles_consume_their_own_queues_in_order():
    backend = ScriptedBackend({"decompose": ["one", "two"], "expand": [{"steps": [1]}]})
    assert backend.complete(ask("a"), role="decompose").text == "one"
    assert backend.complete(ask("b"), role="expand").text == '{"steps":[1]}'
    assert backend.complete(ask("c"), role="decompose").text == "two"
    assert backend.remaining() == 0


def test_running_out_names_the_role_and_counts():
    backend = ScriptedBackend({"repair": ["fix"]})
    backend.complete(ask("x"), role="repair")
    with pytest.raises(ScriptExhausted, match=r"role 'repair': call 2 for it, the script had 1"):
        backend.complete(ask("x"), role="repair")
    with pytest.raises(ScriptExhausted, match=r"no response for role 'critique'.*repair"):
        backend.complete(ask("x"), role="critique")


def test_star_matches_any_role_after_the_roles_own_queue():
    backend = ScriptedBackend({"direct": ["mine"], "*": ["shared"]})
    assert backend.complete(ask("q"), role="direct").text == "mine"
    assert backend.complete(ask("q"), role="direct").text == "shared"
    with pytest.raises(ScriptExhausted, match="plus 1 for any role"):
        backend.complete(ask("q"), role="direct")


def test_responder_answers_when_the_script_is_used_up():
    seen = []

    def responder(messages, role):
        seen.append(role)
        return {"role": role, "last": messages[-1]["content"]}

    backend = ScriptedBackend({"refine": ["scripted first"]}, responder=responder)
    assert backend.complete(ask("p"), role="refine").text == "scripted first"
    assert json.loads(backend.complete(ask("p2"), role="refine").text) == {"role": "refine",
                                                                          "last": "p2"}
    assert json.loads(backend.complete(ask("p3")).text)["role"] is None
    assert seen == ["refine", None]


def test_scripted_exceptions_are_raised_and_recorded():
    backend = ScriptedBackend({"expand": [LLMTimeout("scripted timeout"), "ok"]})
    with pytest.raises(LLMTimeout, match="scripted timeout"):
        backend.complete(ask("e"), role="expand")
    assert backend.complete(ask("e"), role="expand").text == "ok"
    first, second = backend.calls
    assert isinstance(first.raised, LLMTimeout) and first.answer is None
    assert second.answer == "ok" and second.raised is None


def test_token_counts_are_exact_and_configurable():
    backend = ScriptedBackend({"direct": ["Find Apple Pick Apple"]})
    completion = backend.complete([SYSTEM, {"role": "user", "content": "put apple in fridge"}],
                                  role="direct")
    assert (completion.prompt_tokens, completion.output_tokens) == (4 + 4, 4)
    assert completion.seconds == 0.0 and not completion.estimated_tokens
    by_chars = ScriptedBackend({"direct": ["abc"]}, count_tokens=len, seconds_per_call=0.25)
    completion = by_chars.complete([{"role": "user", "content": "hello"}], role="direct")
    assert (completion.prompt_tokens, completion.output_tokens, completion.seconds) == \
        (5, 3, 0.25)


def test_accounting_through_call_counter_is_exact():
    counter = CallCounter(ScriptedBackend({"decompose": ["a b"], "expand": ["c", "d e f"]}))
    counter.complete(ask("one two"), role="decompose")
    counter.complete(ask("three"), role="expand")
    counter.complete(ask("four"), role="expand")
    expand = counter.usage("expand")
    assert (expand.calls, expand.prompt_tokens, expand.output_tokens) == (2, 10, 4)
    assert counter.usage().total_tokens == 6 + 2 + 10 + 4


def test_calls_record_role_messages_schema_temperature_seed():
    backend = ScriptedBackend({"critique": ["fine"]})
    schema = {"type": "object"}
    backend.complete(ask("check it"), schema=schema, temperature=0.0, seed=5, role="critique")
    [call] = [c for c in backend.calls if c.role == "critique"]
    assert call.messages[-1] == {"role": "user", "content": "check it"}
    assert call.schema == schema and call.temperature == 0.0 and call.seed == 5
    assert "You are a planner." in call.prompt


def test_script_from_a_json_file_and_the_registry(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"direct": [{"steps": []}]}))
    backend = get_backend("scripted", script=str(path))
    assert backend.complete(ask("x"), role="direct").json() == {"steps": []}
    with pytest.raises(LLMConfigError, match="not found"):
        ScriptedBackend(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(LLMConfigError, match="object mapping role"):
        ScriptedBackend(tmp_path / "bad.json")


@pytest.mark.parametrize("script", [{"direct": "not a list"}, ["x"]])
def test_malformed_scripts_are_config_errors(script):
    with pytest.raises(LLMConfigError):
        ScriptedBackend(script)
