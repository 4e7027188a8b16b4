"""ALFWorld's text commands as plan steps of the `alfworld` domain, and back.

ALFWorld's agent types commands such as `go to countertop 1`, `take apple 1 from countertop 1`,
`move apple 1 to microwave 1` or `heat apple 1 with microwave 1`. `parse_alfworld_command`
reads one into a `PlanStep` of our domain (`PlanStep("GoTo", ("countertop_1",))`: each object
as ALFWorld prints it, "apple 1", becomes the PDDL name `apple_1`); `alfworld_command` writes a
step back as the command ALFWorld accepts. A text that is no command, or a step whose action
has none, is a `SageError` naming the step.
"""
from __future__ import annotations

import re

from ..pddl.errors import SageError
from ..pddl.model import PlanStep

_COMMANDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern + r"$", re.IGNORECASE), action) for pattern, action in (
        (r"go to (?P<a>.+)", "GoTo"),
        (r"open (?P<a>.+)", "Open"),
        (r"close (?P<a>.+)", "Close"),
        (r"take (?P<a>.+?) from (?P<b>.+)", "Take"),
        (r"move (?P<a>.+?) to (?P<b>.+)", "Put"),
        (r"put (?P<a>.+?) (?:in/on|into|in|on) (?P<b>.+)", "Put"),
        (r"(?:use|toggle) (?P<a>.+)", "Toggle"),
        (r"heat (?P<a>.+?) with (?P<b>.+)", "Heat"),
        (r"cool (?P<a>.+?) with (?P<b>.+)", "Cool"),
        (r"clean (?P<a>.+?) with (?P<b>.+)", "Clean"),
        (r"slice (?P<a>.+?) with (?P<b>.+)", "Slice"),
        (r"examine (?P<a>.+)", "Examine"),
        (r"look", "Look"),
        (r"inventory", "Inventory"),
    ))

_TEMPLATES = {
    "goto": "go to {0}", "open": "open {0}", "close": "close {0}", "take": "take {0} from {1}",
    "put": "move {0} to {1}", "toggle": "use {0}", "heat": "heat {0} with {1}",
    "cool": "cool {0} with {1}", "clean": "clean {0} with {1}", "slice": "slice {0} with {1}",
    "examine": "examine {0}", "look": "look", "inventory": "inventory",
}


def object_name(words: str) -> str:
    """ALFWorld's printed name ("apple 1") as a PDDL object name ("apple_1")."""
    return "_".join(words.split()).lower()


def display_name(name: str) -> str:
    """A PDDL object name ("apple_1") as ALFWorld prints it ("apple 1")."""
    return re.sub(r"_(\d+)$", r" \1", name)


def parse_alfworld_command(text: str, index: int = 0) -> PlanStep:
    """One ALFWorld command ("take apple 1 from countertop 1") as a plan step of our domain."""
    command = " ".join(text.strip().split())
    for pattern, action in _COMMANDS:
        match = pattern.match(command)
        if match:
            args = tuple(object_name(match.group(g)) for g in ("a", "b") if g in match.groupdict())
            return PlanStep(action=action, args=args, index=index, text=text.strip())
    raise SageError(f"step {index + 1}: {text!r} is not an ALFWorld command (go to, open, close, "
                    f"take ... from, move ... to, use, heat/cool/clean/slice ... with, examine, "
                    f"look, inventory)")


def alfworld_command(step: PlanStep) -> str:
    """The ALFWorld text command for a plan step of our domain."""
    template = _TEMPLATES.get(step.action.lower().replace(" ", ""))
    if template is None:
        raise SageError(f"step {step.index + 1}: {step.action!r} has no ALFWorld command")
    return template.format(*(display_name(a) for a in step.args))
