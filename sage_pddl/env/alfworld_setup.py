"""`sage-pddl env-setup alfworld`: make (or reuse) ALFWorld's own virtual environment.

TextWorld's engine runs in an interpreter of its own (`env/textworld.py` says why and how it
is found). `setup_alfworld_env(folder)` makes that interpreter: a virtual environment in
`folder` (by default `textworld.env_dir()`) created with this Python, `TEXTWORLD_REQUIREMENT`
installed into it with its own pip (so pip's configuration and wheel cache apply: the Fast
Downward that `fast-downward-textworld` compiles from source is built once per machine and
reused from the wheel cache by every later setup), then checked by starting the TextWorld
worker in it and asking it for `hello`. Only then is the folder marked ready
(`textworld.READY_MARKER`, holding what was installed); a setup that fails leaves it unmarked,
so `--env alfworld` keeps naming the setup command.

A folder already marked ready for the same requirement is reused as it is (checked again,
nothing installed) unless `force` is given; one that fails the check loses its mark.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .base import EnvError
from .textworld import READY_MARKER, SETUP_COMMAND, TextWorldGame, env_dir, venv_python

TEXTWORLD_REQUIREMENT = "textworld[pddl]>=1.6,<1.8"
"""What the environment gets: the `alfworld` extra of pyproject.toml (a test holds the two
equal), TextWorld with its own Fast Downward, pinned to the releases the tests ran on."""


@dataclass(frozen=True)
class SetupResult:
    """What `setup_alfworld_env` did."""

    folder: Path
    python: Path
    textworld: str
    reused: bool
    seconds: float


def _marker(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / READY_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def setup_alfworld_env(folder: Path | None = None, *, force: bool = False,
                       say: Callable[[str], None] = lambda line: None) -> SetupResult:
    """Make or reuse ALFWorld's environment in `folder` (see the module docstring)."""
    began = time.monotonic()
    folder = (folder or env_dir()).expanduser().absolute()
    python = venv_python(folder)
    marker = _marker(folder)
    reuse = (not force and marker is not None and python.exists()
             and marker.get("requirement") == TEXTWORLD_REQUIREMENT)
    if not reuse:
        (folder / READY_MARKER).unlink(missing_ok=True)
        if not python.exists():
            say(f"creating the virtual environment {folder}")
            try:
                venv.EnvBuilder(with_pip=True).create(folder)
            except (OSError, subprocess.CalledProcessError) as error:
                raise EnvError(f"cannot create a virtual environment in {folder}: "
                               f"{error}") from error
        say(f"installing {TEXTWORLD_REQUIREMENT} with {python} -m pip (Fast Downward compiles "
            "from source the first time; pip's wheel cache keeps the build)")
        installed = subprocess.run([str(python), "-m", "pip", "install",
                                    TEXTWORLD_REQUIREMENT], stdout=sys.stderr, check=False)
        if installed.returncode != 0:
            raise EnvError(f"pip could not install {TEXTWORLD_REQUIREMENT} into {folder} "
                           f"(exit status {installed.returncode}; its output is above); run "
                           f"`{SETUP_COMMAND}` again once that is fixed")
    game = TextWorldGame(str(python))
    try:
        hello = game.hello()
    except EnvError as error:
        (folder / READY_MARKER).unlink(missing_ok=True)
        raise EnvError(f"the environment {folder} cannot run TextWorld: {error}; run "
                       f"`{SETUP_COMMAND} --force`") from error
    finally:
        game.close()
    version = str(hello.get("textworld", "?"))
    if not reuse:
        (folder / READY_MARKER).write_text(json.dumps(
            {"requirement": TEXTWORLD_REQUIREMENT, "textworld": version,
             "python": sys.version.split()[0]}) + "\n", encoding="utf-8")
    return SetupResult(folder, python, version, reuse, time.monotonic() - began)
