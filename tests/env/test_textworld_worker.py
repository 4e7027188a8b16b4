"""The TextWorld worker's protocol and the client's bounds, on real processes and real bytes.

The worker's request loop (`textworld_worker.serve`) is driven here in-process with byte
streams: it needs no TextWorld until a game is loaded. The client (`TextWorldGame`) is run
against the worker script started with this interpreter, which has no TextWorld: its `hello`
is refused with that reason, which is what a broken ALFWorld environment looks like.
"""
from __future__ import annotations

import io
import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from sage_pddl.env import textworld as textworld_module
from sage_pddl.env.alfworld_setup import TEXTWORLD_REQUIREMENT, setup_alfworld_env
from sage_pddl.env.base import EnvError
from sage_pddl.env.textworld import READY_MARKER, TextWorldGame, textworld_python
from sage_pddl.env.textworld_worker import serve

REPO = Path(__file__).resolve().parents[2]


def _serve(*lines: bytes, max_bytes: int = 1000) -> list[dict]:
    replies = io.BytesIO()
    serve(io.BytesIO(b"".join(lines)), replies, max_bytes)
    return [json.loads(line) for line in replies.getvalue().splitlines()]


def test_the_worker_answers_bad_requests_and_goes_on():
    replies = _serve(b"not json\n", b"[1, 2]\n", b'{"cmd": "fly"}\n', b'{"cmd": "step"}\n',
                     b'{"cmd": "load", "domain": 1}\n', b'{"cmd": "close"}\n',
                     b'{"cmd": "hello"}\n')
    assert [r.get("kind") for r in replies] == ["bad-request", "bad-request", "bad-request",
                                                "no-game", "bad-request", None]
    assert "unknown cmd 'fly'" in replies[2]["error"]
    assert "'load' needs 'domain' as a string" in replies[4]["error"]
    assert replies[-1] == {"ok": True}  # close ends the loop: the hello after it is not read


def test_a_request_line_over_the_limit_ends_the_worker_unread():
    replies = _serve(b'{"cmd": "load", "domain": "' + b"x" * 5000 + b'"}\n',
                     b'{"cmd": "hello"}\n', max_bytes=1000)
    assert replies == [{"ok": False, "kind": "too-large",
                        "error": "a request line is longer than 1000 bytes"}]


def test_a_worker_without_textworld_is_refused_with_that_reason():
    game = TextWorldGame(sys.executable)
    try:
        with pytest.raises(EnvError, match="no-textworld: cannot import TextWorld"):
            game.hello()
    finally:
        game.close()


def test_the_setup_requirement_is_the_alfworld_extra():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert extras["alfworld"] == [TEXTWORLD_REQUIREMENT]


def test_a_ready_environment_that_cannot_run_textworld_loses_its_mark(tmp_path, monkeypatch):
    """A ready-marked folder is reused without installing, but its check still runs the
    worker: one that cannot import TextWorld fails the setup with that reason and is no longer
    chosen."""
    folder = tmp_path / "alfworld"
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)  # an interpreter without TextWorld
    (folder / READY_MARKER).write_text(json.dumps({"requirement": TEXTWORLD_REQUIREMENT}))
    monkeypatch.setenv("SAGE_PDDL_ALFWORLD_ENV", str(folder))
    assert textworld_python() == str(python)  # marked ready: chosen
    with pytest.raises(EnvError, match=r"cannot run TextWorld: .*no-textworld.*--force"):
        setup_alfworld_env(folder)
    assert not (folder / READY_MARKER).exists()
    monkeypatch.setattr(textworld_module, "_here_has_textworld", lambda: False)
    with pytest.raises(EnvError, match="is not ready"):
        textworld_python()


def _interpreter(tmp_path: Path, body: str) -> str:
    """A stand-in for the environment's Python: a shell script that ignores its arguments."""
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def test_a_worker_that_never_answers_is_stopped_at_the_time_limit(tmp_path):
    pid_file = tmp_path / "pid"
    game = TextWorldGame(_interpreter(tmp_path, f"echo $$ > {pid_file}; exec sleep 600"),
                         load_timeout=0.5)
    with pytest.raises(EnvError, match=r"did not answer 'hello' within 0.5 s \(it was stopped\)"):
        game.hello()
    with pytest.raises(ProcessLookupError):  # ended and reaped, not left running
        os.kill(int(pid_file.read_text()), 0)


@pytest.mark.parametrize(("body", "said"), [
    ("read line; echo 'Fast Downward exploded' >&2; exit 3",
     r"ended during 'hello'; it said: Fast Downward exploded"),
    ("exit 3", r"ended during 'hello'"),
    ("read line; echo '{\"ok\": tru'", r"sent a bad reply: .*invalid reply of the TextWorld worker"),
    ("read line; echo '[1]'", r"a reply that is no JSON object"),
    ("while read line; do echo '{\"ok\": true}'; done", None),
    ("read line; head -c 70000000 /dev/zero; exec sleep 600",
     r"reply is longer than 67108864 bytes"),
])
def test_a_worker_that_answers_badly_is_an_env_error(tmp_path, body, said):
    game = TextWorldGame(_interpreter(tmp_path, body), load_timeout=30)
    try:
        if said is None:  # a well-formed reply is taken; a load's reply must hold a game
            assert game.hello() == {"ok": True}
            with pytest.raises(EnvError, match="no command templates"):
                game.load("(define)", "(define)", "")
        else:
            with pytest.raises(EnvError, match=said):
                game.hello()
    finally:
        game.close()
