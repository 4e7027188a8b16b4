"""`--llm-timeout SECONDS` on every command that calls a model, and a host that timed out is
called no more by `plan` (issue 47): `plan` used to wait out 4 calls of 120 s each on a server
that had already timed out, with no option to shorten the deadline. A local fake Ollama server
answers the model listing at once and holds every chat call."""
from __future__ import annotations

import threading

import pytest

from sage_pddl.bench.fakellm import FakeOllama
from sage_pddl.cli import main


@pytest.mark.parametrize("command", ["plan", "run", "bench", "demo"])
def test_every_command_that_calls_a_model_takes_a_deadline(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--llm-timeout SECONDS" in capsys.readouterr().out


def test_plan_stops_calling_a_host_after_its_first_timeout(capsys):
    calls: list[str | None] = []
    release = threading.Event()

    def held(messages, role):
        calls.append(role)
        release.wait(60)
        return {"steps": []}

    with FakeOllama(held, latency=0.0, model="tiny", capacity=8) as server:
        try:
            code = main(["plan", "ithor#K19", "--llm", "ollama", "--llm-host", server.url,
                         "--model", "tiny", "--llm-timeout", "1"])
        finally:
            release.set()
    err = capsys.readouterr().err
    assert code == 1 and calls == ["decompose"], (calls, err)
    assert "did not finish its answer within 1 s" in err and "no more requests go to it" in err


def test_a_deadline_without_a_server_is_a_setting_error(capsys):
    assert main(["plan", "ithor#K19", "--llm", "scripted", "--llm-timeout", "5"]) == 2
    assert "--llm-timeout: a deadline of seconds > 0, for the backends that call a server" \
        in capsys.readouterr().err
