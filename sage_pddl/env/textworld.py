"""TextWorld's PDDL engine, run in a worker process of ALFWorld's own virtual environment.

TextWorld (`textworld[pddl]`, the `alfworld` extra) brings its own build of Fast Downward,
`fast-downward-textworld`, which installs the module `fast_downward.translate` that
unified-planning's `up-fast-downward` (the `planners` and `test` extras) installs too, in an
incompatible version. So TextWorld runs in an interpreter of its own: `TextWorldGame` starts
`textworld_worker.py` there and speaks its JSON-lines protocol (documented in that module and
in docs/alfworld.md). A worker plays one game at a time and is kept for the next `load` (starting
one costs TextWorld's import); a worker that failed, timed out or went over a limit is ended,
and the next `load` starts a fresh one.

Which interpreter (`textworld_python()`), first found wins:

1. the virtual environment `sage-pddl env-setup alfworld` made (`env/alfworld_setup.py`):
   `SAGE_PDDL_ALFWORLD_ENV`, else `$XDG_CACHE_HOME/sage-pddl/envs/alfworld`, else
   `~/.cache/sage-pddl/envs/alfworld`, used once setup has marked it ready;
2. this interpreter, when it has TextWorld and TextWorld's own Fast Downward translator (an
   environment with the `alfworld` extra and no `up-fast-downward`).

Without either, `require_textworld()` raises an `EnvError` naming the setup command.

Bounds, as for any input: a request line is at most `MAX_REQUEST_BYTES` (a game's domain,
problem and grammar together), a reply line at most `MAX_REPLY_BYTES` and nested at most as
`pddl.limits` allows; loading a game may take `LOAD_TIMEOUT` seconds and a step
`STEP_TIMEOUT`, after which the worker is killed and the game ends with an `EnvError`; the
worker's address space is capped at `MAX_MEMORY` bytes. The worker's stderr goes to a
temporary file whose last lines are quoted when it fails.
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..pddl.errors import SageError
from ..pddl.limits import load_json
from .base import EnvError

SETUP_COMMAND = "sage-pddl env-setup alfworld"
WORKER_SCRIPT = Path(__file__).with_name("textworld_worker.py")
READY_MARKER = "sage-pddl-ready.json"
"""The file `env-setup` writes into the environment once TextWorld answered in it."""

MAX_REQUEST_BYTES = 16 * 1024 * 1024
MAX_REPLY_BYTES = 64 * 1024 * 1024
LOAD_TIMEOUT = 300.0
"""Seconds a game's load may take (Fast Downward grounds the problem twice)."""
STEP_TIMEOUT = 60.0
MAX_MEMORY = 4 * 1024 * 1024 * 1024


def env_dir() -> Path:
    """Where `env-setup alfworld` makes ALFWorld's environment (see the module docstring)."""
    named = os.environ.get("SAGE_PDDL_ALFWORLD_ENV", "").strip()
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sage-pddl" / "envs" / "alfworld"


def venv_python(folder: Path) -> Path:
    """The interpreter of the virtual environment in `folder`."""
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _ready(folder: Path) -> bool:
    return (folder / READY_MARKER).is_file() and venv_python(folder).exists()


def _here_has_textworld() -> bool:
    """This interpreter has TextWorld and the Fast Downward translator TextWorld needs (not
    unified-planning's newer one, recognised by its `options.set_options`; read as a file, as
    TextWorld's translator parses sys.argv on import)."""
    import importlib.util  # only for this check

    if importlib.util.find_spec("textworld") is None:
        return False
    spec = importlib.util.find_spec("fast_downward")
    locations = list(spec.submodule_search_locations or []) if spec else []
    options = [Path(where) / "translate" / "options.py" for where in locations]
    return bool(options) and not any(
        path.is_file() and "def set_options" in path.read_text(errors="replace")
        for path in options)


def textworld_python(folder: Path | None = None) -> str:
    """The interpreter that runs TextWorld's games, or an EnvError naming the setup command."""
    folder = folder or env_dir()
    if _ready(folder):
        return str(venv_python(folder))
    if _here_has_textworld():
        return sys.executable
    state = "is not ready (setup did not finish)" if folder.exists() else "does not exist"
    raise EnvError(f"ALFWorld's engine (TextWorld with its Fast Downward) runs in its own "
                   f"environment, and {folder} {state}: run `{SETUP_COMMAND}` once "
                   f"(`--path DIR` or SAGE_PDDL_ALFWORLD_ENV for another folder)")


def require_textworld(folder: Path | None = None) -> str:
    """The interpreter for TextWorld's games (`textworld_python`); an EnvError otherwise."""
    return textworld_python(folder)


def textworld_available(folder: Path | None = None) -> bool:
    try:
        textworld_python(folder)
    except EnvError:
        return False
    return True


@dataclass(frozen=True)
class Operator:
    """One applicable ground operator and the command TextWorld shows for it."""

    action: str
    command: str
    args: tuple[tuple[str, str], ...]
    """(object, parameter type) per parameter, in order."""


@dataclass(frozen=True)
class GameState:
    """TextWorld's state after a load or a step (the worker's STATE)."""

    feedback: str
    won: bool
    facts: tuple[tuple[str, ...], ...]
    admissible_commands: tuple[str, ...]
    operators: tuple[Operator, ...]

    @classmethod
    def from_reply(cls, state: Any) -> GameState:
        try:
            return cls(str(state["feedback"]), bool(state["won"]),
                       tuple(tuple(str(part) for part in fact) for fact in state["facts"]),
                       tuple(str(command) for command in state["admissible_commands"]),
                       tuple(Operator(str(op["action"]), str(op["command"]),
                                      tuple((str(value), str(kind)) for value, kind in op["args"]))
                             for op in state["valid"]))
        except (KeyError, TypeError, ValueError) as error:
            raise EnvError(f"the TextWorld worker sent a malformed state: {error!r}") from None


@dataclass(frozen=True)
class Template:
    """An action's command template (`take {o} from {r}`) and its parameters (name, type)."""

    text: str
    parameters: tuple[tuple[str, str], ...]


class TextWorldGame:
    """One TextWorld game in a worker process (see the module docstring)."""

    def __init__(self, python: str | None = None, *, load_timeout: float = LOAD_TIMEOUT,
                 step_timeout: float = STEP_TIMEOUT, max_memory: int = MAX_MEMORY):
        self.python = python or textworld_python()
        self.load_timeout = load_timeout
        self.step_timeout = step_timeout
        self.max_memory = max_memory
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self.templates: dict[str, Template] = {}

    def hello(self) -> dict[str, Any]:
        """The worker's `hello`: it imported TextWorld and its compiled Fast Downward."""
        if self._process is None:
            self._start()
        return self._request({"cmd": "hello"}, self.load_timeout)

    def load(self, domain: str, problem: str, grammar: str) -> GameState:
        """Start a game of the PDDL domain, problem and TextWorld grammar (in the running worker,
        which replaces its previous game; a worker is started when none runs)."""
        if self._process is None:
            self._start()
        reply = self._request({"cmd": "load", "domain": domain, "problem": problem,
                               "grammar": grammar}, self.load_timeout)
        templates = reply.get("templates")
        if not isinstance(templates, dict):
            raise EnvError("the TextWorld worker sent no command templates")
        try:
            self.templates = {str(name): Template(str(t["template"]), tuple(
                (str(p), str(kind)) for p, kind in t["parameters"]))
                for name, t in templates.items()}
        except (KeyError, TypeError, ValueError) as error:
            raise EnvError(f"the TextWorld worker sent malformed templates: {error!r}") from None
        return GameState.from_reply(reply.get("state"))

    def step(self, command: str) -> GameState:
        """TextWorld's answer to one command."""
        if self._process is None:
            raise EnvError("no TextWorld game: load one first")
        return GameState.from_reply(self._request({"cmd": "step", "command": command},
                                                  self.step_timeout).get("state"))

    def close(self) -> None:
        """End the worker (asked to close, killed if it does not)."""
        process, self._process = self._process, None
        if process is not None:
            try:
                if process.poll() is None and process.stdin is not None:
                    process.stdin.write(b'{"cmd": "close"}\n')
                    process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # --- the worker process ----------------------------------------------------------------

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(
                [self.python, "-I", str(WORKER_SCRIPT), "--max-bytes", str(MAX_REQUEST_BYTES),
                 "--max-memory", str(self.max_memory)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        except OSError as error:
            raise EnvError(f"cannot start the TextWorld worker with {self.python}: {error}; "
                           f"run `{SETUP_COMMAND}` again") from error

    def _request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdin is not None
        line = json.dumps(message).encode("utf-8") + b"\n"
        if len(line) > MAX_REQUEST_BYTES:
            raise EnvError(f"the game is too large for the TextWorld worker: "
                           f"{len(line)} bytes, at most {MAX_REQUEST_BYTES}")
        try:
            process.stdin.write(line)
            process.stdin.flush()
        except OSError:
            pass  # the worker ended: what it wrote before, or the end, is read below
        text = self._read_line(timeout, message["cmd"])
        try:
            reply = load_json(text, None, "reply of the TextWorld worker")
        except SageError as error:
            self._fail(f"the TextWorld worker sent a bad reply: {error}")
        if not isinstance(reply, dict):
            self._fail("the TextWorld worker sent a reply that is no JSON object")
        if reply.get("ok") is not True:
            kind, said = reply.get("kind"), reply.get("error")
            if kind == "load-failed":
                raise EnvError(f"TextWorld could not load the game: {said}")
            if kind in ("too-large", "step-failed", "internals", "no-textworld"):
                self.close()
            raise EnvError(f"TextWorld worker: {kind}: {said}")
        return reply

    def _read_line(self, timeout: float, what: str) -> str:
        """One reply line within `timeout` seconds and MAX_REPLY_BYTES, or an EnvError."""
        process = self._process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        size = 0
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self._fail(f"the TextWorld worker did not answer '{what}' within "
                               f"{timeout:g} s (it was stopped)")
                chunk = os.read(process.stdout.fileno(), 1 << 16)
                if not chunk:
                    self._fail(f"the TextWorld worker ended during '{what}'")
                chunks.append(chunk)
                size += len(chunk)
                if b"\n" in chunk:
                    break
                if size > MAX_REPLY_BYTES:
                    self._fail(f"the TextWorld worker's reply is longer than {MAX_REPLY_BYTES} "
                               "bytes")
        data = b"".join(chunks)
        if len(data) > MAX_REPLY_BYTES:
            self._fail(f"the TextWorld worker's reply is longer than {MAX_REPLY_BYTES} bytes")
        return data.split(b"\n", 1)[0].decode("utf-8", errors="replace")

    def _fail(self, message: str) -> Any:
        """End the worker and raise an EnvError with the last lines it wrote to stderr."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        said = ""
        if self._stderr is not None:
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - 2000))
            tail = self._stderr.read().decode("utf-8", errors="replace").strip().splitlines()
            said = ("; it said: " + " | ".join(tail[-5:])) if tail else ""
        self.close()
        raise EnvError(message + said)
