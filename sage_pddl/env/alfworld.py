"""ALFWorld's text games on TextWorld's PDDL engine (`--env alfworld`).

TextWorld (`textworld.envs.pddl.PddlEnv`, with its compiled Fast Downward from the
`fast-downward-textworld` package, i.e. `pip install 'textworld[pddl]'`) plays a game given as a
PDDL domain, a PDDL problem and a TextWorld grammar (`.twl2`): Fast Downward grounds the problem,
the applicable ground operators become the *admissible commands* through the grammar's command
templates (`take {o} from {r}`), a command runs only if it is one of them (anything else is
answered "Nothing happens."), and the grammar writes the text feedback. This is the engine
ALFWorld's text games run on. TextWorld runs in a worker process of ALFWorld's own virtual
environment (`textworld.py`; `sage-pddl env-setup alfworld` makes it), so this module never
imports it.

`AlfworldEnv.reset(problem)` starts a game from a problem (`Problem` model, PDDL text or a path)
and a domain: by default the bundled `alfworld` domain with `ALFWORLD_GRAMMAR_FILE` (below), or any
domain + grammar pair, for instance ALFWorld's own `alfred.pddl` with its `alfred.twl2` (`GRAMMARS`
gives the bundled grammar of each bundled domain). An ALFWorld game file (`game.tw-pddl`, the
`scene` of a game task) is played as it is: its own domain, grammar and problem. The goal is the
game's own: TextWorld's `won`, its check of the problem's goal.

A plan step becomes a command (`command_for`, the one place where steps become the game's
commands; ALFWorld's command text and our steps are read into each other by
`tasks/alfworld_commands.py`):

- a step whose text is an admissible command (`go to desk`) runs as it is;
- a text in ALFWorld's wording (`take apple 1 from countertop 1`) is read as the step it says
  (`Take apple_1 countertop_1`) and goes on as below;
- otherwise its action (a domain action or one of its `@sage alias` names) and arguments are
  matched against the applicable ground operators, comparing arguments in parameter order
  (case-insensitive; arguments of type `agent` may be left out): the matching operator's command
  runs;
- a step that matches no applicable operator is written with its action's command template and
  sent anyway, so TextWorld itself answers "Nothing happens." (code `not-admissible`); an action
  the grammar does not know gets code `unknown-action`.

Observations are TextWorld's feedback text; `visible_objects` are the objects the admissible
commands mention; facts are reported only with `observe_facts=True` (TextWorld knows the whole
state, an agent does not). `true_state()` is TextWorld's full fact set, `goal_reached()` its
`won`. `admissible_commands` lists the current admissible commands.

`ALFWORLD_GRAMMAR_FILE` (`data/alfworld/alfworld.twl2`) is the TextWorld grammar for the
bundled `alfworld` domain (actions GoTo, Open, Close, Take, Put, Toggle, Heat, Cool, Clean,
Slice, Examine, Look, Inventory). Its texts are adapted from ALFWorld's `alfred.twl2`
(alfworld/alfworld @ ca98194, MIT License, (c) 2020 Mohit Shridhar and others) to that domain's
predicates; command templates follow ALFWorld's commands (`go to`, `open`, `close`,
`take .. from ..`, `move .. to ..`, `use`, `heat/cool/clean .. with ..`, `slice .. with ..`,
`examine`, `look`, `inventory`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from sage_pddl.domains import load_domain
from sage_pddl.pddl import parse_domain, write_domain, write_problem
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.limits import load_json, read_text
from sage_pddl.pddl.model import Domain, PlanStep, Problem, key
from sage_pddl.pddl.vocabulary import name_key, vocabulary
from sage_pddl.tasks.alfworld_commands import parse_alfworld_command

from .base import EnvError, Fact, Observation, StepResult, numbered
from .textworld import (
    LOAD_TIMEOUT,
    STEP_TIMEOUT,
    GameState,
    TextWorldGame,
    require_textworld,
)
from .transitions import Transition, TransitionLog, make_transition

ALFWORLD_GRAMMAR_FILE = Path(str(resources.files("sage_pddl") / "data" / "alfworld" /
                                 "alfworld.twl2"))
"""The TextWorld grammar of the bundled `alfworld` domain (see the module docstring)."""

GRAMMARS = {"alfworld": ALFWORLD_GRAMMAR_FILE,
            "alfred": ALFWORLD_GRAMMAR_FILE.parent / "textworld-test" / "grammar.twl2"}
"""The bundled grammar of each domain by name; another domain gets `alfworld`'s."""

GAME_FILE_SUFFIX = ".tw-pddl"
MAX_GAME_BYTES = 16 * 1024 * 1024
"""The largest ALFWorld game file read (its domain, grammar and problem)."""

NOTHING_HAPPENS = "Nothing happens."
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _text_of(source: Any, what: str) -> str:
    """PDDL/grammar text from a model, a path or the text itself."""
    if isinstance(source, Domain):
        return write_domain(source)
    if isinstance(source, Problem):
        return write_problem(source)
    if isinstance(source, Path) or (isinstance(source, str) and "(" not in source
                                     and "::" not in source):
        return read_text(source, f"the {what}")
    if isinstance(source, str):
        return source
    raise EnvError(f"expected a {what} (model, path or text), got {type(source).__name__}")


@dataclass(frozen=True)
class Command:
    """The command a plan step became, and how: `admissible` is False when no applicable
    operator matched (TextWorld will answer "Nothing happens.")."""

    text: str
    admissible: bool
    code: str | None = None
    reason: str = ""


class AlfworldEnv:
    """See the module docstring."""

    name = "alfworld"

    def __init__(self, domain: Domain | str | Path | None = None, *,
                 grammar: str | Path | None = None, log: str | Path | None = None,
                 observe_facts: bool = False, domains_dirs: Iterable[str | Path] | None = None,
                 task: str | None = None, venv: str | Path | None = None,
                 load_timeout: float = LOAD_TIMEOUT, step_timeout: float = STEP_TIMEOUT):
        self._game = TextWorldGame(require_textworld(Path(venv) if venv else None),
                                   load_timeout=load_timeout, step_timeout=step_timeout)
        self._default_domain = domain
        self._default_grammar = grammar
        self._domains_dirs = list(domains_dirs) if domains_dirs else None
        self._default_task = task
        self.observe_facts = observe_facts
        self._log = TransitionLog(log) if log else None
        self._episode = -1
        self._state: GameState | None = None
        self.last_transition: Transition | None = None

    # --- episode ---------------------------------------------------------------------------

    def reset(self, problem: Problem | str | Path, *, domain: Domain | str | Path | None = None,
              grammar: str | Path | None = None, task: str | None = None,
              scene: str | None = None) -> Observation:
        """Start a TextWorld game of `problem`. A `scene` naming an ALFWorld game file
        (`game.tw-pddl`, the scene of a game task) is played as that file holds it: its own
        domain, grammar and problem; any other scene is not used (the problem is the game)."""
        game = read_game_file(scene) if scene and scene.endswith(GAME_FILE_SUFFIX) else None
        if game is not None:
            domain_text, problem_text, grammar_text = game
            domain_model = _parsed_or_none(domain_text)
        else:
            domain_source = domain if domain is not None else self._default_domain
            domain_model = self._domain_model(domain_source, problem)
            domain_text = _text_of(domain_model if domain_model is not None else domain_source,
                                   "domain")
            grammar_source = grammar if grammar is not None else self._default_grammar
            grammar_text = _text_of(grammar_source if grammar_source is not None
                                    else grammar_for(domain_model), "grammar")
            problem_text = _text_of(problem, "problem")
        self._state = None
        self._state = self._game.load(domain_text, problem_text, grammar_text)
        self._aliases = _alias_map(domain_model)
        self._domain_name = domain_model.name if domain_model is not None else "alfworld"
        self._task = task or self._default_task or (
            problem.name if isinstance(problem, Problem) else "alfworld")
        self._episode += 1
        self._index = 0
        self.last_transition = None
        return self.observe(self._state.feedback.strip())

    def step(self, step: PlanStep) -> StepResult:
        self._require_episode()
        index = self._index
        self._index += 1
        pre = self.true_state()
        plan_step = numbered(step, index)
        command = self.command_for(plan_step)
        self._state = self._game.step(command.text)
        feedback = self._state.feedback.strip()
        # TextWorld answers every command it cannot run with exactly this text
        success = command.admissible and feedback != NOTHING_HAPPENS
        code = None if success else (command.code or "not-admissible")
        message = feedback if success else (
            f"{command.text!r}: {feedback}" + (f" ({command.reason})" if command.reason else ""))
        return self._finish(plan_step, pre, success, message, code, feedback)

    def true_state(self) -> frozenset[Fact]:
        state = self._require_episode()
        return frozenset(tuple(key(part) for part in fact) for fact in state.facts)

    def goal_reached(self) -> bool | None:
        """TextWorld's `won`: the game's own goal (the problem's) holds."""
        return self._require_episode().won

    def close(self) -> None:
        self._game.close()
        if self._log is not None:
            self._log.close()

    # --- commands --------------------------------------------------------------------------

    @property
    def admissible_commands(self) -> list[str]:
        return list(self._require_episode().admissible_commands)

    def command_for(self, plan_step: PlanStep) -> Command:
        """The command a plan step becomes (see the module docstring)."""
        state = self._require_episode()
        text = " ".join(plan_step.text.split())
        # a step of words may be ALFWorld's own command text; one that does not read as one is
        # read as a plan step below
        raw = None if plan_step.fields else text
        typed = {operator.command.lower(): operator.command for operator in state.operators}
        if text and text.lower() in typed:
            return Command(typed[text.lower()], True)
        if raw is not None:  # ALFWorld's own command text ("take apple 1 from countertop 1")
            try:
                plan_step = parse_alfworld_command(raw)
            except SageError:
                pass  # not ALFWorld's wording: read as a plan step above
        action = self._aliases.get(name_key(plan_step.action), key(plan_step.action))
        args = [key(a) for a in plan_step.args]
        partial: set[str] = set()
        for operator in state.operators:
            if operator.action != action:
                continue
            values = [(key(value), key(kind)) for value, kind in operator.args]
            if [v for v, _ in values] == args or \
                    [v for v, t in values if t != "agent"] == args:
                return Command(operator.command, True)
            if _is_subsequence(args, [v for v, _ in values]):
                partial.add(operator.command)
        if len(partial) == 1:  # e.g. `PickupObject cd desk` for PickupObject(?a ?l ?o ?r)
            return Command(partial.pop(), True)
        rendered = self._render_template(action, args)
        if rendered is not None:  # a plan step of a known action: send its command text
            return Command(rendered, False, "not-admissible", "not an admissible command now")
        if raw is not None:  # text that is not a step of ours: TextWorld judges it as typed
            return Command(raw.lower(), False, "not-admissible", "not an admissible command now")
        return Command(" ".join([plan_step.action, *plan_step.args]).lower(), False,
                       "unknown-action", f"no action {plan_step.action!r} in the game's grammar")

    def _render_template(self, action: str, args: list[str]) -> str | None:
        """The action's command template filled with the step's arguments (agent-typed parameters
        may be left out); None when the grammar has no such action or the arguments do not fit."""
        template = self._game.templates.get(action)
        if template is None:
            return None
        names = [name for name, _ in template.parameters]
        if len(args) != len(names):
            names = [name for name, kind in template.parameters if key(kind) != "agent"]
        if len(args) != len(names):
            return None
        values = dict(zip(names, args))
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template.text)

    # --- observation -----------------------------------------------------------------------

    def observe(self, text: str | None = None) -> Observation:
        state = self._require_episode()
        visible = sorted({key(value) for operator in state.operators
                          for value, kind in operator.args if key(kind) != "agent"})
        facts = tuple(sorted(self.true_state())) if self.observe_facts else ()
        return Observation(text if text is not None else state.feedback.strip(),
                           tuple(visible), facts)

    @property
    def step_count(self) -> int:
        return self._index if self._state is not None else 0

    # --- helpers ---------------------------------------------------------------------------

    def _domain_model(self, source: Any, problem: Any) -> Domain | None:
        """The domain as a model when we can have one (for aliases); None for raw text our parser
        does not read (TextWorld may still accept it)."""
        if isinstance(source, Domain):
            return source
        if source is None:
            name = problem.domain_name if isinstance(problem, Problem) else "alfworld"
            return load_domain(name, self._domains_dirs)
        return _parsed_or_none(_text_of(source, "domain"))

    def _finish(self, plan_step: PlanStep, pre: frozenset[Fact], success: bool, message: str,
                code: str | None, feedback: str) -> StepResult:
        self.last_transition = make_transition(
            task=self._task, env=self.name, domain=self._domain_name, step=plan_step.index,
            plan_step=plan_step, pre=pre, success=success, message=message,
            post=self.true_state(), code=code, episode=self._episode)
        if self._log is not None:
            self._log.append(self.last_transition)
        return StepResult(success, message, self.observe(feedback or None), code, plan_step.index)

    def _require_episode(self) -> GameState:
        if self._state is None:
            raise EnvError("no episode: call reset(problem) first")
        return self._state


def _parsed_or_none(text: str) -> Domain | None:
    try:
        return parse_domain(text)
    except SageError:
        return None


def grammar_for(domain: Domain | None) -> Path:
    """The bundled TextWorld grammar of a domain: `alfworld`'s, or TextWorld's ALFWorld test
    grammar for ALFWorld's own `alfred` domain."""
    name = key(domain.name) if domain is not None else "alfworld"
    return GRAMMARS.get(name, ALFWORLD_GRAMMAR_FILE)


def read_game_file(path: str | Path) -> tuple[str, str, str]:
    """An ALFWorld game file's (`game.tw-pddl`) domain, problem and grammar texts."""
    data = load_json(read_text(path, "the ALFWorld game file", MAX_GAME_BYTES), str(path),
                     "ALFWorld game")
    texts = [data.get(name) if isinstance(data, dict) else None
             for name in ("pddl_domain", "pddl_problem", "grammar")]
    domain, problem, grammar = (text if isinstance(text, str) else "" for text in texts)
    if not (domain and problem and grammar):
        raise EnvError(f"{path}: an ALFWorld game file holds 'pddl_domain', 'pddl_problem' "
                       "and 'grammar' as strings")
    return domain, problem, grammar


def _is_subsequence(words: list[str], values: list[str]) -> bool:
    remaining = iter(values)
    return bool(words) and all(word in remaining for word in words)


def _alias_map(domain: Domain | None) -> dict[str, str]:
    """name_key of an alias or action name -> lower-case action name (TextWorld's operator
    names)."""
    if domain is None:
        return {}
    return {word: key(action) for word, action in vocabulary(domain).action_keys.items()}
