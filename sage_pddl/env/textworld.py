"""TextWorld's PDDL engine, the optional extra `alfworld`: importing it, and the two fixes our
domains need from it.

`require_textworld()` imports TextWorld and its `PddlEnv`, or raises an `EnvError` naming the
extra to install; it also refuses an environment where unified-planning's newer Fast Downward
translator has replaced the copy TextWorld needs (both install `fast_downward.translate`).
`textworld_available()` says whether it would succeed.

`declare_implicit_types(game)` and `retype_operands(game, state)` correct what TextWorld reads
from a domain whose parent types are used without being declared, and the types it gives an
operator's objects; both are applied by `AlfworldEnv` to every game it loads.

Both, and `AlfworldEnv`'s command templates, read attributes TextWorld keeps private (a loaded
game's `_logic` and `_pddl_state`; there is no public way to the same). `check_internals(game)`
makes sure a loaded game has them, so that a TextWorld release without them is refused with
that reason rather than failing inside a game; `pyproject.toml` pins the extra to the releases
the tests ran on.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Any

from .base import EnvError

EXTRA = "alfworld"
INSTALL_HINT = "pip install 'sage-pddl[alfworld]'  (installs textworld[pddl])"


def require_textworld() -> Any:
    """Import TextWorld's PDDL environment and its compiled planner, or raise an EnvError naming
    the extra that provides them."""
    try:
        import textworld  # optional extra 'alfworld'
        from textworld.envs.pddl import PddlEnv  # optional extra 'alfworld'
        from textworld.envs.pddl import pddl as pddl_module  # optional extra 'alfworld'
    except ImportError as error:
        raise EnvError(f"ALFWorld needs the optional extra '{EXTRA}' (TextWorld's PDDL engine): "
                       f"{INSTALL_HINT}; import failed: {error}") from error
    if getattr(pddl_module, "fast_downward_missing", False):
        raise EnvError(f"ALFWorld needs TextWorld's compiled Fast Downward (package "
                       f"fast-downward-textworld, the 'pddl' extra of textworld): {INSTALL_HINT}")
    _check_translator()
    return textworld, PddlEnv


def _check_translator() -> None:
    """TextWorld's Fast Downward (`fast-downward-textworld`) and unified-planning's
    (`fast-downward.translate`, pulled in by `up-fast-downward`) install the same module,
    `fast_downward.translate`, in two incompatible versions: whichever was installed last wins.
    The newer one is recognised by its `options.set_options` API."""
    # Read the file instead of importing it: TextWorld's old translator parses sys.argv (and
    # exits) on import.
    spec = importlib.util.find_spec("fast_downward")
    locations = list(spec.submodule_search_locations or []) if spec else []
    sources = [Path(where) / "translate" / "options.py" for where in locations]
    if any(source.is_file() and "def set_options" in source.read_text(errors="replace")
           for source in sources):
        raise EnvError(
            "TextWorld's PDDL engine cannot run here: the module fast_downward.translate comes "
            "from 'fast-downward.translate' (installed by up-fast-downward, the 'planners' and "
            "'test' extras), which replaces the older copy TextWorld needs. Install the "
            f"'{EXTRA}' extra in its own virtual environment: {INSTALL_HINT}")


def textworld_available() -> bool:
    try:
        require_textworld()
    except EnvError:
        return False
    return True


INTERNALS = (("_logic", "types", "_types"), ("_logic", "actions"),
             ("_pddl_state", "_actions"), ("_pddl_state", "name2type"))
"""The private attributes of a loaded TextWorld game (`PddlEnv`) this module and `AlfworldEnv`
read, each as its path of attribute names."""


def check_internals(game: Any) -> None:
    """Raise an EnvError unless the loaded `game` has every attribute of `INTERNALS`."""
    for path in INTERNALS:
        found = game
        for name in path:
            found = getattr(found, name, None)
            if found is None:
                raise EnvError(
                    f"TextWorld {_installed_version()} has no {'.'.join(('game', *path))}, "
                    f"which sage-pddl reads to fix what TextWorld reads from a domain; install "
                    f"a release the '{EXTRA}' extra allows: {INSTALL_HINT}")


def _installed_version() -> str:
    try:
        return importlib.metadata.version("textworld")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def declare_implicit_types(game: Any) -> None:
    """Give TextWorld's type hierarchy the parent types a domain uses without declaring them.

    `(:types item receptacle - thing)` makes `thing` a type (a child of `object`), but Fast
    Downward's translator lists only declared types, so TextWorld's grammar conditions over
    `thing` would fail with a KeyError.
    """
    from textworld.logic import Type  # optional extra 'alfworld'

    hierarchy = game._logic.types
    known = set(hierarchy._types)
    for declared in list(hierarchy._types.values()):
        for parent in declared.parents:
            if parent not in known:
                hierarchy.add(Type(parent, ("object",)))
                known.add(parent)


def retype_operands(game: Any, state: Any) -> Any:
    """Type the objects of each applicable operator with their declared types.

    TextWorld types an operator's objects with the *parameter* types (`?x - thing`), while the
    state's facts carry the objects' own types (`fridge_1 - receptacle`); the feedback grammar's
    conditions would then never match a fact about an object bound to a supertype parameter.
    The operators are re-read by the next `step`, so fixing them here fixes that step's feedback.
    """
    from textworld.logic import Variable  # optional extra 'alfworld'

    declared = game._pddl_state.name2type
    for action in state["_valid_actions"]:
        action.mapping = {placeholder: Variable(value.name, declared.get(value.name, value.type))
                          for placeholder, value in action.mapping.items()}
    return state
