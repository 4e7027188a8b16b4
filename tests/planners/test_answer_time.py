"""A model's answer is parsed once, in time linear in its size (issue 47).

A 3.5 KB answer holding a long run of `[` inside a quoted string cost SayCan a third of a
second a call: the search for JSON in an answer tried every `[` and `{` with a full decode.
The regular expressions that read answers retried runs of spaces at every split (a fence of a
few thousand newlines took minutes) and every later quote (the JSON shape check). The decoder
is counted here (the characters handed to it), and the expressions run in a child process
under a bound that the old code missed many times over: no timing is asserted.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

from sage_pddl.bench.fakellm import FakeOllama
from sage_pddl.llm.ollama import OllamaBackend
from sage_pddl.planners import get_planner
from sage_pddl.planners.parsing import parse_json_value

from ..env.server_process import REPO_ROOT

QUOTED_BRACKETS = 'x "' + "[" * 3500 + '" y'
HOSTILE = {
    "quoted-brackets": QUOTED_BRACKETS,
    "open-lists": "[1, " * 2000,
    "prose-brackets": "see [" * 2000 + '{"steps": []}',
    "open-objects": '{"a": ' * 2000,
    "mismatched": "[}" * 2000,
    "json-in-a-string": '{"steps": "' + "[" * 3500 + '"',
}


@pytest.fixture
def decoded(monkeypatch):
    """The characters handed to JSON's decoder (from where it starts to the text's end)."""
    handed = [0]
    decode = json.JSONDecoder.raw_decode

    def counted(self, text, idx=0):
        handed[0] += len(text) - idx
        return decode(self, text, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    return handed


@pytest.mark.parametrize("answer", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_search_for_json_in_an_answer_reads_it_a_bounded_number_of_times(answer, decoded):
    parse_json_value(answer)
    assert decoded[0] <= 3 * len(answer), f"{decoded[0]:,} characters decoded"


def test_a_value_in_an_answer_is_still_found_after_what_is_not_json():
    assert parse_json_value('see [x] then {"steps": [1]}') == {"steps": [1]}
    assert parse_json_value('{"plan": {"steps": ["a"]}') == {"steps": ["a"]}  # cut short
    assert parse_json_value('[1, {"steps": [2]} oops') == {"steps": [2]}
    assert parse_json_value('{"a": [1, 2} {"steps": []}') == {"steps": []}
    assert parse_json_value("[] and [3]") == [3]
    assert parse_json_value("[" * 300 + '{"ok": 1}') == {"ok": 1}
    assert parse_json_value('{"a": "}"} z') == {"a": "}"}


def test_an_answer_from_a_fake_server_is_checked_in_linear_time(task):
    """Through the Ollama backend, against a local server whose every answer is a fence
    opening and a few thousand newlines: the check that an answer is JSON (fenced or not)
    took minutes a call; the planner now gets its failed calls at once. (A thread joined with
    a generous bound: a call that hangs fails the test.)"""
    answer = "```json\n" + "\n" * 5000 + "x"
    outcome: list = []
    with FakeOllama(lambda messages, role: answer, latency=0.0) as server:
        backend = OllamaBackend(model="fake", host=server.url, retries=0)
        thread = threading.Thread(target=lambda: outcome.append(
            get_planner("SayCan", llm=backend).plan(task)), daemon=True)
        thread.start()
        thread.join(60)
        assert not thread.is_alive(), "the calls did not end"
        backend.close()
    (result,) = outcome
    assert result.calls >= 1 and server.served == result.calls
    assert any("not JSON" in call.error for call in result.call_log), result.call_log


SLOW_BEFORE = {  # read by the code path named, in a child process
    "fenced-newlines": ("from sage_pddl.llm.output import parse_json_output",
                        "parse_json_output('```json\\n' + '\\n' * 5000 + 'x')"),
    "escaped-quotes": ("from sage_pddl.planners.base import unusable_answer",
                       "unusable_answer('[' * 129 + '\"' + '\\\\\"' * 99_000)"),
    "spaced-step-line": ("from sage_pddl.planners.parsing import parse_steps",
                         "parse_steps('1. Pick' + ' ' * 100_000 + '!')"),
    "spaced-item": ("from sage_pddl.planners.parsing import parse_subgoals",
                    "parse_subgoals('1. a' + ' ' * 150_000 + 'b')"),
    "digits": ("from sage_pddl.planners.saycan import read_scores",
               "read_scores('7' * 100_000, 3)"),
    "open-tags": ("from sage_pddl.planners.cot import read_reasoned",
                  "read_reasoned('<plan>' * 50_000)"),
}


@pytest.mark.parametrize("imports, call", SLOW_BEFORE.values(), ids=SLOW_BEFORE.keys())
def test_answers_are_read_in_linear_time(imports, call):
    """Each of these took the old code minutes (quadratic or cubic): the bound is generous."""
    code = textwrap.dedent(f"""
        {imports}
        {call}
        print("read")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} did not end within 60 s")
    assert done.returncode == 0 and done.stdout.strip() == "read", done.stderr
