"""Record/replay cassettes around the scripted backend."""
from __future__ import annotations

import json

import pytest

from sage_pddl.llm import get_backend
from sage_pddl.llm.base import Completion
from sage_pddl.llm.errors import LLMConfigError, LLMTimeout
from sage_pddl.llm.replay import (
    CassetteError,
    CassetteMiss,
    ReplayBackend,
    request_key,
    request_record,
)
from sage_pddl.llm.scripted import ScriptedBackend

ASK = [{"role": "user", "content": "put the apple in the fridge"}]
OTHER = [{"role": "user", "content": "open the fridge"}]
SCHEMA = {"type": "object"}


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_record_writes_one_line_per_call_with_the_request(tmp_path):
    cassette = tmp_path / "runs" / "c.jsonl"
    inner = ScriptedBackend({"direct": ['{"steps": [1]}', "two words"]}, model="m1",
                            seconds_per_call=0.5)
    recorder = ReplayBackend(inner, cassette, mode="record")
    recorder.complete(ASK, schema=SCHEMA, temperature=0.0, seed=3, role="direct")
    recorder.complete(OTHER, role="direct")
    first, second = lines(cassette)
    assert first["request"] == {"messages": ASK, "schema": SCHEMA, "temperature": 0.0,
                                "seed": 3, "model": "m1"}
    assert first["key"] == request_key(first["request"])
    assert first["response"]["text"] == '{"steps": [1]}'
    assert first["response"]["seconds"] == 0.5 and first["role"] == "direct"
    assert second["request"]["schema"] is None and second["request"]["temperature"] == 0.2
    assert recorder.recorded == 2


def test_replay_reproduces_text_tokens_and_seconds_without_the_inner_backend(tmp_path):
    cassette = tmp_path / "c.jsonl"
    recorder = ReplayBackend(ScriptedBackend({"*": ["a b c", "d"]}, model="m",
                                             seconds_per_call=1.5), cassette, mode="record")
    live = [recorder.complete(ASK, seed=1), recorder.complete(OTHER, seed=1)]
    player = ReplayBackend(None, cassette, mode="replay", model="m")
    replayed = [player.complete(OTHER, seed=1), player.complete(ASK, seed=1)]
    assert replayed[::-1] == live
    assert player.replayed == 2


def test_identical_requests_replay_in_recorded_order(tmp_path):
    cassette = tmp_path / "c.jsonl"
    recorder = ReplayBackend(ScriptedBackend({"*": ["first", "second", "third"]}), cassette,
                             mode="record")
    for _ in range(3):
        recorder.complete(ASK)
    player = ReplayBackend(None, cassette, mode="replay", model="scripted")
    assert [player.complete(ASK).text for _ in range(3)] == ["first", "second", "third"]
    with pytest.raises(CassetteMiss, match="no recorded answer"):
        player.complete(ASK)


def test_replay_miss_names_the_request(tmp_path):
    cassette = tmp_path / "c.jsonl"
    ReplayBackend(ScriptedBackend({"*": ["x"]}), cassette, mode="record").complete(ASK)
    player = ReplayBackend(None, cassette, mode="replay", model="scripted")
    with pytest.raises(CassetteMiss, match=r"role 'repair'.*open the fridge"):
        player.complete(OTHER, role="repair")


@pytest.mark.parametrize("change", [
    {"temperature": 0.9}, {"seed": 2}, {"schema": SCHEMA}])
def test_the_key_covers_every_request_field(tmp_path, change):
    cassette = tmp_path / "c.jsonl"
    ReplayBackend(ScriptedBackend({"*": ["x"]}), cassette, mode="record").complete(ASK, seed=1)
    player = ReplayBackend(None, cassette, mode="replay", model="scripted")
    with pytest.raises(CassetteMiss):
        player.complete(ASK, **{"seed": 1, **change})


def test_the_model_is_part_of_the_key(tmp_path):
    cassette = tmp_path / "c.jsonl"
    ReplayBackend(ScriptedBackend({"*": ["x"]}, model="a"), cassette, mode="record").complete(ASK)
    with pytest.raises(CassetteMiss, match="model 'b'"):
        ReplayBackend(None, cassette, mode="replay", model="b").complete(ASK)
    assert ReplayBackend(None, cassette, mode="replay", model="a").complete(ASK).text == "x"


def test_the_role_is_not_part_of_the_key_and_int_temperature_keys_like_float():
    messages = [dict(m) for m in ASK]
    assert request_key(request_record(messages, None, 0, None, "m")) == \
        request_key(request_record(messages, None, 0.0, None, "m"))


def test_auto_replays_what_it_has_and_records_the_rest(tmp_path):
    cassette = tmp_path / "c.jsonl"
    ReplayBackend(ScriptedBackend({"*": ["old"]}), cassette, mode="record").complete(ASK)
    inner = ScriptedBackend({"*": ["new", "newer"]})
    auto = ReplayBackend(inner, cassette, mode="auto")
    assert auto.complete(ASK).text == "old"          # from the cassette, inner not asked
    assert auto.complete(OTHER).text == "new"        # recorded
    assert auto.complete(ASK).text == "newer"        # cassette's queue for ASK is used up
    assert len(inner.calls) == 2 and (auto.replayed, auto.recorded) == (1, 2)
    assert len(lines(cassette)) == 3
    again = ReplayBackend(None, cassette, mode="replay", model="scripted")
    assert [again.complete(ASK).text, again.complete(ASK).text, again.complete(OTHER).text] == \
        ["old", "newer", "new"]


def test_failed_inner_calls_are_not_recorded(tmp_path):
    cassette = tmp_path / "c.jsonl"
    recorder = ReplayBackend(ScriptedBackend({"*": [LLMTimeout("t"), "ok"]}), cassette,
                             mode="record")
    with pytest.raises(LLMTimeout):
        recorder.complete(ASK)
    recorder.complete(ASK)
    assert [entry["response"]["text"] for entry in lines(cassette)] == ["ok"]


def test_a_corrupt_cassette_names_file_and_line(tmp_path):
    cassette = tmp_path / "c.jsonl"
    cassette.write_text('{"key": "k", "response": {"text": "x"}}\n\nnot json\n')
    with pytest.raises(CassetteError, match=r"c\.jsonl:3"):
        ReplayBackend(None, cassette, mode="replay", model="m")
    # before: a line nested past Python's recursion limit was an internal error (RecursionError)
    cassette.write_text('{"key": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(CassetteError, match=r"c\.jsonl:1: not a cassette entry \(cassette "
                                            r"record nesting deeper than"):
        ReplayBackend(None, cassette, mode="replay", model="m")


def test_configuration_errors(tmp_path):
    with pytest.raises(LLMConfigError, match="mode"):
        ReplayBackend(ScriptedBackend(), tmp_path / "c.jsonl", mode="rewind")
    with pytest.raises(LLMConfigError, match="inner backend"):
        ReplayBackend(None, tmp_path / "c.jsonl", mode="auto", model="m")
    with pytest.raises(LLMConfigError, match="cassette not found"):
        ReplayBackend(None, tmp_path / "none.jsonl", mode="replay", model="m")
    with pytest.raises(LLMConfigError, match="model"):
        ReplayBackend(None, tmp_path / "c.jsonl", mode="replay")


def test_a_cassette_that_cannot_be_recorded_fails_before_any_call_naming_it(tmp_path):
    # before: the first model call failed with the bare OSError ("No such file or directory")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(LLMConfigError, match=r"cassette .*a-file/runs/c.jsonl: cannot record"):
        ReplayBackend(ScriptedBackend(), blocker / "runs" / "c.jsonl", mode="record")
    cassette = tmp_path / "c.jsonl"
    recorder = ReplayBackend(ScriptedBackend({"direct": ["one"]}), cassette, mode="record")
    cassette.mkdir()  # the path taken away between two calls: still named
    with pytest.raises(LLMConfigError, match=r"cassette .*c.jsonl: cannot record"):
        recorder.complete(ASK, role="direct")


def test_registry_builds_replay_around_a_named_inner_backend(tmp_path):
    cassette = tmp_path / "c.jsonl"
    recorder = get_backend("replay", inner="scripted", cassette=cassette, mode="record",
                           script={"*": ["hello"]}, model="m")
    assert recorder.complete(ASK).text == "hello" and recorder.inner.model == "m"
    player = get_backend("replay", cassette=str(cassette), mode="replay", model="m")
    assert isinstance(player, ReplayBackend)
    assert player.complete(ASK) == Completion("hello", 6, 1, 0.0, model="m")
    with pytest.raises(LLMConfigError, match="cassette"):
        get_backend("replay", inner="scripted")
    with pytest.raises(LLMConfigError, match="inner backend given by name"):
        get_backend("replay", inner=ScriptedBackend(), cassette=cassette, host="h")
