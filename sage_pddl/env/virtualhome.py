"""VirtualHome through Embodied Agent Interface's own evolving-graph simulator.

EAI (`eai-eval`, module `virtualhome_eval`; the optional extra `virtualhome`) evaluates plans for
VirtualHome scene 1 on a symbolic scene graph: `construct_planner` loads a task's initial graph,
final graph and gold script, and `MotionPlanner.my_execute_primitive_action_eval` executes one
script line such as `[WALK] <floor_lamp> (1000)` with VirtualHome's `ScriptExecutor`, reporting an
`ExecutionInfo` whose error type EAI's `TemporalOrderChecker` refines (missing step, wrong temporal
order, affordance error, additional step). `VirtualHomeEnv` runs exactly that code for one task per
episode; nothing here re-implements VirtualHome's action semantics.

Task identity: an EAI task is a file id such as `11_1` (program 11, scene graph variant 1).
`reset(problem)` takes it from the `task` option (the id, or a task reference that contains it
such as `virtualhome#11_1`), else from the problem name when it contains one (`11_1`, `eai_11_1`,
`vh-11_1`), or from a plain string passed instead of a problem.

Plan steps are translated to script lines (`to_script_line`):

- EAI's PDDL vocabulary, `walk_towards character laptop`, `put_on character pot oven`: the action
  maps through `PDDL_TO_SCRIPT` and the `character` argument is dropped; an action whose PDDL
  names more objects than its script takes says which of them the script takes
  (`PDDL_SCRIPT_OBJECTS`): `drop ?char ?obj ?room` is `[DROP] <obj>` (the executor drops `obj`
  if held), `wipe ?char ?obj1 ?obj2` is `[WIPE] <obj1>` (close to `obj1`, holding anything);
- script action names used as plan actions, `WALK laptop`, `SwitchOn laptop`, `PUTBACK cup sink`;
- script lines themselves, `[WALK] <laptop> (1000)`, ids included.

Objects are VirtualHome class names. A name resolves to the node with that class among the task's
relevant nodes (EAI's `get_relevant_nodes`: the nodes whose state or relations change between the
initial and the final graph, the same set EAI's PDDL problems and prompts list), else among all
nodes of the scene; several nodes of one class resolve to the lowest id. A plan can name one node
exactly with `name.ID`, `name_ID`, `name(ID)` or `<name> (ID)`.

Observations describe the relevant nodes; facts use EAI's PDDL predicates (`(on floor_lamp)`,
`(next_to character floor_lamp)`, `(inside character dining_room)`, `(has_switch floor_lamp)`, ...)
with class names as object names, as EAI writes its PDDL problems (`get_initial_states_and_final_
goals_wo_id`). `goal_reached()` is EAI's `scene_evaluate_wID` on the task's node, edge and action
goals (see docs/virtualhome.md for its quirks).

A failed step leaves the graph unchanged and carries the code `eai/<error type>` (`eai/missing_
step`, `eai/wrong_temporal_order`, `eai/affordance_error`, `eai/unseen_object`, `eai/unknown_
error`), or a structural code (`unknown-action`, `wrong-arity`, `unknown-object`). A step EAI
classifies as an *additional step* (its effect already holds, e.g. switching on what is on) does
nothing and is reported as a success with a message saying so, because EAI's scorer keeps such a
plan executable. With `additional_step_fails=True` it is reported as VirtualHome's executor
answered it, a failure with the code `eai/additional_step` (what induction needs: the executor
refused the step because a precondition such as `(off ?obj)` did not hold).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, PlanStep, Problem, key
from sage_pddl.pddl.vocabulary import name_key

from .base import EnvError, Fact, Observation, StepResult, numbered
from .transitions import Transition, TransitionLog, make_transition

EXTRA = "virtualhome"
INSTALL_HINT = "pip install 'sage-pddl[virtualhome]'  (installs eai-eval)"
SCENE_ID = 1
"""EAI's action-sequencing evaluation uses VirtualHome scene 1 only."""

PDDL_TO_SCRIPT: dict[str, str] = {
    "walk_towards": "WALK", "walk_into": "WALK", "find": "FIND", "sit": "SIT",
    "standup": "STANDUP", "grab": "GRAB", "open": "OPEN", "open_object": "OPEN",
    "close": "CLOSE",
    "put_on": "PUTBACK", "put_on_character": "PUTON", "put_inside": "PUTIN",
    "switch_on": "SWITCHON", "switch_off": "SWITCHOFF", "drink": "DRINK", "turn_to": "TURNTO",
    "look_at": "LOOKAT", "wipe": "WIPE", "drop": "DROP", "read": "READ", "touch": "TOUCH",
    "lie": "LIE", "pour": "POUR", "type": "TYPE", "watch": "WATCH", "move": "MOVE",
    "wash": "WASH", "squeeze": "SQUEEZE", "plug_in": "PLUGIN", "plug_out": "PLUGOUT",
    "cut": "CUT", "eat": "EAT", "sleep": "SLEEP", "wake_up": "WAKEUP",
}
"""EAI's PDDL actions (resources/virtualhome/virtualhome.pddl) -> VirtualHome script actions;
`open_object` is the bundled domain's name for EAI's `open` (see domains/virtualhome.pddl)."""



class ScriptObjects(NamedTuple):
    """Which objects of an EAI PDDL action's step its script line takes."""

    pddl: int
    """Objects the PDDL action names after the character."""
    taken: tuple[int, ...]
    """Their positions (from 0, after the character) that the script line takes, in order."""


PDDL_SCRIPT_OBJECTS: dict[str, ScriptObjects] = {"drop": ScriptObjects(2, (0,)),
                                                  "wipe": ScriptObjects(2, (0,))}
"""EAI's PDDL actions that name more objects than their script action takes (see the module
docstring): `drop ?char ?obj ?room` -> `[DROP] <obj>`, `wipe ?char ?obj1 ?obj2` -> `[WIPE]
<obj1>`. Any other step with too many objects is refused `wrong-arity`."""

CHARACTER_NAMES = frozenset({"character", "char", "agent", "robot"})
ERROR_CODES: dict[int, str] = {0: "wrong_temporal_order", 1: "missing_step", 2: "affordance_error",
                               3: "unseen_object", 4: "additional_step", 5: "unknown_error"}
"""EAI's ExecutionInfo error types (lower-case spelling of its `error_code_to_type`)."""
ADDITIONAL_STEP = 4

_SCRIPT_LINE = re.compile(r"^\s*\[(\w+)\]\s*(.*)$")
_SCRIPT_PARAM = re.compile(r"<([^>]+)>\s*\(([^)]*)\)")
_TASK_ID = re.compile(r"(?<![0-9])([0-9]+_[0-9]+)(?![0-9])")
_NAME_WITH_ID = re.compile(r"^(.+?)\s*(?:\.|_|\()\s*([0-9]+)\)?$")

# VirtualHome relation -> EAI PDDL predicate, by (from is character, to is character/room)
_ROOM_CATEGORY = "Rooms"


def require_eai() -> ModuleType:
    """Import `virtualhome_eval` or raise an EnvError naming the extra that provides it."""
    try:
        # optional extra 'virtualhome': importing it is the check
        import virtualhome_eval  # noqa: F401
        from virtualhome_eval.simulation.evolving_graph import eval_utils  # noqa: F401
    except ImportError as error:
        raise EnvError(f"VirtualHome needs the optional extra '{EXTRA}' (EAI's simulator, "
                       f"module virtualhome_eval): {INSTALL_HINT}; import failed: {error}"
                       ) from error
    return virtualhome_eval


def eai_available() -> bool:
    try:
        require_eai()
    except EnvError:
        return False
    return True


# --- EAI's data --------------------------------------------------------------------------------

@dataclass(frozen=True)
class EaiPaths:
    """Where the installed eai-eval keeps its VirtualHome resources and dataset."""

    resources: Path
    dataset: Path

    @property
    def programs(self) -> Path:
        return self.dataset / "programs_processed_precond_nograb_morepreconds"


@lru_cache(maxsize=1)
def eai_paths() -> EaiPaths:
    package = Path(str(require_eai().__file__)).resolve().parent
    return EaiPaths(resources=package / "resources", dataset=package / "dataset")


@lru_cache(maxsize=1)
def _task_index() -> tuple[dict[str, str], dict[str, dict]]:
    """(id2task, scene-1 task dicts) exactly as EAI's action-sequencing evaluation loads them."""
    root = eai_paths().resources / "virtualhome"
    id2task = json.loads((root / "id2task.json").read_text())
    task_dicts = json.loads((root / "task_state_LTL_formula_accurate.json").read_text())
    return id2task, task_dicts[f"scene_{SCENE_ID}"]


@lru_cache(maxsize=1)
def _static_data() -> tuple[Any, Any, Any]:
    from virtualhome_eval.simulation.evolving_graph import utils  # optional extra 'virtualhome'

    return utils.load_name_equivalence(), utils.load_properties_data(), utils.load_object_placing()


def list_eai_tasks() -> list[str]:
    """Every EAI VirtualHome task id with goals (scene 1), sorted numerically."""
    id2task, task_dicts = _task_index()
    ids = {file_id for task in task_dicts.values() for file_id in task}
    return sorted(ids, key=lambda i: tuple(int(p) for p in i.split("_")))


@lru_cache(maxsize=1)
def eai_gold_pddl_plans() -> dict[str, list[str]]:
    """EAI's gold plans in its PDDL vocabulary (`resources/virtualhome/gold_pddl_plan.json`)."""
    path = eai_paths().resources / "virtualhome" / "gold_pddl_plan.json"
    return json.loads(path.read_text())


@dataclass(frozen=True)
class EaiGoals:
    """A task's goals as EAI's scorer uses them (duplicates removed the way it removes them)."""

    nodes: tuple[dict, ...]
    edges: tuple[dict, ...]
    actions: tuple[str, ...]


def eai_task_name(task_id: str) -> str:
    id2task, task_dicts = _task_index()
    name = id2task.get(task_id)
    if name is None or task_id not in task_dicts.get(name, {}):
        raise EnvError(f"unknown EAI VirtualHome task {task_id!r}: expected an id such as '11_1' "
                       f"listed in EAI's id2task.json for scene {SCENE_ID}")
    return name


def eai_goals(task_id: str) -> EaiGoals:
    """The task's symbolic goals, as `evaluate_results` builds them."""
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.eval_utils import remove_duplicate_dicts

    id2task, task_dicts = _task_index()
    goals = task_dicts[eai_task_name(task_id)][task_id]["vh_goal"]
    nodes, edges = [], []
    for goal in goals["goal"]:
        if {"id", "class_name", "state"} <= goal.keys():
            nodes.append(goal)
        elif {"from_id", "to_id", "relation_type"} <= goal.keys():
            edges.append(goal)
        else:
            raise EnvError(f"EAI task {task_id}: goal {goal!r} is neither a node nor an edge goal")
    # EAI de-duplicates action goals with list(set(...)) and then matches them *in that order*:
    # keep its order (it depends on the process's string hash seed; see docs/virtualhome.md)
    return EaiGoals(tuple(remove_duplicate_dicts(nodes)), tuple(remove_duplicate_dicts(edges)),
                    tuple(list(set(goals["actions"]))))


def build_planner(task_id: str) -> tuple[Any, list[str]]:
    """EAI's `construct_planner` for one task: (MotionPlanner, gold script lines)."""
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.eval_utils import construct_planner

    eai_task_name(task_id)
    equivalence, properties, placing = _static_data()
    planner, _, gold_actions, _, _ = construct_planner(
        equivalence, properties, placing, scenegraph_id=SCENE_ID, script_id=task_id,
        dataset_root=str(eai_paths().programs))
    return planner, gold_actions


def task_resolver(task_id: str, planner: Any = None) -> ObjectResolver:
    """The object resolver of a task: every node of its initial graph, preferring EAI's
    relevant nodes (`get_relevant_nodes`, the objects of EAI's PDDL problem and prompt)."""
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.eval_utils import get_relevant_nodes

    if planner is None:
        planner, _ = build_planner(task_id)
    _, relevant = get_relevant_nodes(planner)
    return ObjectResolver(planner.init_state.to_dict()["nodes"], relevant)


# --- translation -------------------------------------------------------------------------------

class StepTranslationError(SageError):
    """A plan step that cannot become a VirtualHome script line; `code` says why."""

    def __init__(self, message: str, code: str):
        self.code = code
        super().__init__(message)


@dataclass(frozen=True)
class ScriptLine:
    """One VirtualHome script line: an action and its (class name, node id) parameters."""

    action: str
    objects: tuple[tuple[str, int], ...] = ()

    @property
    def text(self) -> str:
        return " ".join([f"[{self.action}]", *(f"<{n}> ({i})" for n, i in self.objects)])


@lru_cache(maxsize=1)
def script_arity() -> dict[str, int]:
    """Every VirtualHome script action with its number of objects (from EAI's `Action` enum)."""
    require_eai()
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.scripts import Action

    return {name: member.value[1] for name, member in Action.__members__.items()}


class ObjectResolver:
    """Class names -> node ids for one scene graph (see the module docstring for the rules)."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]], relevant_ids: Iterable[int]):
        self.names: dict[int, str] = {}
        self._by_class: dict[str, list[int]] = {}
        for node in nodes:
            self.names[node["id"]] = node["class_name"]
            self._by_class.setdefault(name_key(node["class_name"]), []).append(node["id"])
        for ids in self._by_class.values():
            ids.sort()
        self.relevant = frozenset(relevant_ids)

    def resolve(self, word: str) -> tuple[str, int]:
        """(class name, node id) for a plan word; raises StepTranslationError `unknown-object`."""
        word = word.strip()
        candidates = self._by_class.get(name_key(word))
        if candidates:
            chosen = next((i for i in candidates if i in self.relevant), candidates[0])
            return self.names[chosen], chosen
        explicit = _SCRIPT_PARAM.fullmatch(word) or _NAME_WITH_ID.fullmatch(word)
        if explicit and explicit.group(2).strip().isdigit():
            wanted, node = explicit.group(1).strip(), int(explicit.group(2))
            if node in self.names and name_key(self.names[node]) == name_key(wanted):
                return self.names[node], node
            raise StepTranslationError(f"no object {wanted} with id {node} in the scene",
                                       "unknown-object")
        raise StepTranslationError(f"no object named {word!r} in the scene", "unknown-object")

    def spell(self, node: int) -> str:
        return self.names.get(node, str(node))


def parse_script_text(text: str) -> tuple[str, list[str]] | None:
    """`[WALK] <laptop> (1000)` -> ("WALK", ["<laptop> (1000)"]); None for other text."""
    match = _SCRIPT_LINE.match(text)
    if not match:
        return None
    return match.group(1).upper(), [f"<{n.strip()}> ({i.strip()})"
                                    for n, i in _SCRIPT_PARAM.findall(match.group(2))]


def script_words(step: PlanStep) -> tuple[str, list[str]]:
    """(action word, argument words) of a step: of the script line its text is
    (`[WALK] <sofa> (1)`), else its own words."""
    script = parse_script_text(step.text) if step.text.lstrip().startswith("[") else None
    if script:
        return script[0], script[1]
    return step.action, list(step.args)


def script_objects(name: str, words: list[str], wanted: int | None) -> list[str]:
    """The argument words a step of the action keyed `name` gives its script line of `wanted`
    objects (None: not known): the character dropped from EAI's PDDL actions, then the objects
    `PDDL_SCRIPT_OBJECTS` names when the step names as many as the PDDL action, then, if there
    are still too many, the characters. The number may still be wrong; the caller says so."""
    if name in PDDL_TO_SCRIPT and words and key(words[0]) in CHARACTER_NAMES:
        words = words[1:]  # EAI's PDDL actions name the character first; scripts never do
    chosen = PDDL_SCRIPT_OBJECTS.get(name)
    if chosen is not None and len(words) == chosen.pddl:
        words = [words[i] for i in chosen.taken]
    if wanted is not None and len(words) > wanted:
        words = [w for w in words if key(w) not in CHARACTER_NAMES] if wanted else []
    return words


def to_script_line(action: str, args: Iterable[str], resolver: ObjectResolver) -> ScriptLine:
    """Translate one step (action word + argument words) to a script line, or raise
    StepTranslationError with code `unknown-action`, `wrong-arity` or `unknown-object`."""
    arity = script_arity()
    words = [a for a in args if a.strip()]
    name = key(action.strip().strip("[]"))
    if name in PDDL_TO_SCRIPT:
        script_action = PDDL_TO_SCRIPT[name]
    elif name.upper() in arity or name.upper().replace("_", "") in arity:
        script_action = name.upper() if name.upper() in arity else name.upper().replace("_", "")
    else:
        raise StepTranslationError(
            f"unknown action {action!r}: use EAI's PDDL actions "
            f"({', '.join(sorted(PDDL_TO_SCRIPT))}) or VirtualHome script actions "
            f"({', '.join(sorted(arity))})", "unknown-action")
    wanted = arity[script_action]
    taken = script_objects(name, words, wanted)
    if len(taken) != wanted:
        raise StepTranslationError(f"{script_action} takes {wanted} object(s), the step gives "
                                   f"{len(taken)}: {' '.join([action, *args])}", "wrong-arity")
    for word in words if name in PDDL_SCRIPT_OBJECTS else ():
        if key(word) not in CHARACTER_NAMES:  # an object the script leaves out still exists
            resolver.resolve(word)
    return ScriptLine(script_action, tuple(resolver.resolve(w) for w in taken))


# --- the environment ---------------------------------------------------------------------------

def task_id_of(problem: Problem | str, task: str | None = None) -> str:
    """The EAI task id for an episode (see the module docstring)."""
    if task:
        match = _TASK_ID.search(task)
        return match.group(1) if match else task
    name = problem if isinstance(problem, str) else problem.name
    match = _TASK_ID.search(name)
    if not match:
        raise EnvError(f"cannot tell which EAI task problem {name!r} is: pass task='11_1' "
                       f"(an EAI file id) or name the problem after it")
    return match.group(1)


class VirtualHomeEnv:
    """See the module docstring. One EAI task per episode, scene 1."""

    name = "virtualhome"

    def __init__(self, *, task: str | None = None, log: str | Path | None = None,
                 domain_name: str = "virtualhome", additional_step_fails: bool = False):
        require_eai()
        self._default_task = task
        self._additional_step_fails = additional_step_fails
        self._log = TransitionLog(log) if log else None
        self._domain_name = domain_name
        self._episode = -1
        self.planner: Any = None
        self.task_id: str | None = None
        self.last_transition: Transition | None = None
        # (EAI state, its graph as a dict, its facts): the task's initial state's, then the
        # latest one's (see `_view`)
        self._views: list[tuple[Any, dict, frozenset[Fact]]] = []

    # --- episode ---------------------------------------------------------------------------

    def reset(self, problem: Problem | str, *, task: str | None = None,
              domain: Domain | str | None = None, scene: str | None = None) -> Observation:
        """Start EAI task `task` (or the one `problem` names). `domain` and `scene` are
        accepted for the common reset signature and not used: EAI's simulator defines what
        actions do, and the task names its own scene graph."""
        task_id = task_id_of(problem, task or self._default_task)
        if self.planner is None or task_id != self.task_id:
            # loading a task (its graphs, EAI's data files, the resolver) costs far more than
            # a step; EAI's states are never changed in place (a step makes a new one), so
            # `MotionPlanner.reset` returns the same task to its untouched initial state
            goals = eai_goals(task_id)
            planner, gold = build_planner(task_id)
            self.resolver = task_resolver(task_id, planner)
            self.task_id, self.goals, self.gold_script = task_id, goals, tuple(gold)
            self.planner = planner
            self._views = []
        self.planner.reset()
        # the graph is read, never changed: the history shares it with `_view`
        self._history_states = [self._view()[0]]
        self.executed: list[str] = []
        self._episode += 1
        self._index = 0
        self.last_transition = None
        return self.observe()

    def step(self, step: PlanStep) -> StepResult:
        self._require_episode()
        index = self._index
        self._index += 1
        pre = self.true_state()
        plan_step = numbered(step, index)
        action, args = script_words(plan_step)
        try:
            line = to_script_line(action, args, self.resolver)
        except StepTranslationError as error:
            return self._finish(plan_step, pre, False, str(error), error.code)
        success, info = self.planner.my_execute_primitive_action_eval(line.text)
        if success:
            self.executed.append(line.text)
            self._history_states.append(self._view()[0])
            return self._finish(plan_step, pre, True, "ok", None, line)
        error_type = classify_failure(info, self._history_states)
        message = info.get_error_string() or f"{line.text} is not executable"
        if error_type == ADDITIONAL_STEP and not self._additional_step_fails:
            return self._finish(plan_step, pre, True,
                                f"no effect (EAI: additional step): {message}", None, line)
        return self._finish(plan_step, pre, False, message,
                            f"eai/{ERROR_CODES.get(error_type, 'unknown_error')}", line)

    def true_state(self) -> frozenset[Fact]:
        self._require_episode()
        return self._view()[1]

    def goal_reached(self) -> bool | None:
        self._require_episode()
        # optional extra 'virtualhome'
        from virtualhome_eval.simulation.evolving_graph.eval_utils import scene_evaluate_wID

        result = scene_evaluate_wID(self.planner.env_state.to_dict(), list(self.goals.nodes),
                                    list(self.goals.edges), self.planner.acting_char_id,
                                    action_seq=list(self.executed),
                                    action_goals=list(self.goals.actions))
        return bool(result[3])

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    # --- observation -----------------------------------------------------------------------

    def observe(self) -> Observation:
        self._require_episode()
        graph, known = self._view()
        relevant = self.resolver.relevant
        facts = tuple(sorted(known))
        names = tuple(sorted({self.resolver.spell(i) for i in relevant}, key=str.lower))
        return Observation(describe(graph, relevant, self.planner.acting_char_id), names, facts)

    @property
    def step_count(self) -> int:
        return self._index if self.planner is not None else 0

    # --- helpers ---------------------------------------------------------------------------

    def _finish(self, plan_step: PlanStep, pre: frozenset[Fact], success: bool, message: str,
                code: str | None, line: ScriptLine | None = None) -> StepResult:
        if line is not None and line.text != plan_step.text:
            message = f"{line.text}: {message}" if not success else message
        self.last_transition = make_transition(
            task=f"eai#{self.task_id}", env=self.name, domain=self._domain_name,
            step=plan_step.index, plan_step=plan_step, pre=pre, success=success, message=message,
            post=self.true_state(), code=code, episode=self._episode)
        if self._log is not None:
            self._log.append(self.last_transition)
        return StepResult(success, message, self.observe(), code, plan_step.index)

    def _view(self) -> tuple[dict, frozenset[Fact]]:
        """The current scene graph as a dict and its facts, built once per EAI state: a state
        is never changed in place, so the object identifies its graph. Kept: the task's
        initial state's (every reset returns to it) and the latest one's."""
        state = self.planner.env_state
        for held, graph, facts in self._views:
            if held is state:
                return graph, facts
        graph = state.to_dict()
        view = (state, graph, frozenset(graph_facts(graph, self.resolver.relevant)))
        self._views = [self._views[0], view] if self._views else [view]
        return graph, view[2]

    def _require_episode(self) -> None:
        if self.planner is None:
            raise EnvError("no episode: call reset(problem) first")


def classify_failure(info: Any, history_states: list[dict]) -> int:
    """EAI's error type for a failed step: the ExecutionInfo's type, refined by its
    `TemporalOrderChecker` (a missing precondition that held earlier is a wrong order)."""
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.checker import TemporalOrderChecker

    # the checker only reads the history (EAI's evaluation hands it a deep copy, which costs
    # more than executing the step on a large scene graph)
    refined = TemporalOrderChecker(info, history_states).run_checker()
    error_type = refined.get_error_type()
    return 5 if error_type is None or error_type < 0 else int(error_type)


# --- graph -> PDDL facts and text ----------------------------------------------------------------

def graph_facts(graph: Mapping[str, Any], relevant: frozenset[int]) -> set[Fact]:
    """The relevant nodes' states, properties and relations as EAI's PDDL predicates."""
    nodes = {n["id"]: n for n in graph["nodes"] if n["id"] in relevant}
    name = {i: key(n["class_name"]) for i, n in nodes.items()}
    rooms = {i for i, n in nodes.items() if n.get("category") == _ROOM_CATEGORY}
    facts: set[Fact] = set()
    for node_id, node in nodes.items():
        for state in node.get("states", ()):
            facts.add((key(state), name[node_id]))
        for prop in node.get("properties", ()):
            facts.add((key(prop), name[node_id]))
    for edge in graph["edges"]:
        a, b, relation = edge["from_id"], edge["to_id"], edge["relation_type"]
        if a not in nodes or b not in nodes or relation == "BETWEEN":
            continue
        a_char, b_char = name[a] == "character", name[b] == "character"
        if relation == "ON":
            predicate = "ontop" if a_char else "on_char" if b_char else "obj_ontop"
        elif relation == "SITTING":
            predicate = "ontop"
        elif relation == "INSIDE":
            predicate = ("inside" if a_char or b_char else
                         "inside_room" if a in rooms or b in rooms else "obj_inside")
        elif relation == "CLOSE":
            predicate = "next_to" if a_char or b_char else "obj_next_to"
        else:  # FACING, HOLDS_RH, HOLDS_LH keep their names
            predicate = key(relation)
        facts.add((predicate, name[a], name[b]))
    return facts


def describe(graph: Mapping[str, Any], relevant: frozenset[int], character: int) -> str:
    """Observation text: where the character is, what it holds and is near, the task objects."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    rooms = {i for i, n in nodes.items() if n.get("category") == _ROOM_CATEGORY}
    held, near, room = [], [], None
    for edge in graph["edges"]:
        if edge["from_id"] != character:
            continue
        other, relation = edge["to_id"], edge["relation_type"]
        if relation == "INSIDE" and other in rooms:
            room = nodes[other]["class_name"]
        elif relation in ("HOLDS_RH", "HOLDS_LH"):
            held.append(nodes[other]["class_name"])
        elif relation == "CLOSE" and other in relevant:
            near.append(nodes[other]["class_name"])
    lines = [f"You are in the {room or 'house'}.",
             "Holding: " + (", ".join(sorted(held)) if held else "nothing"),
             "Near you: " + (", ".join(sorted(set(near))) if near else "no task object")]
    objects = []
    for node_id in sorted(relevant, key=lambda i: (nodes[i]["class_name"], i)):
        node = nodes[node_id]
        if node_id == character or node_id in rooms:
            continue
        states = ", ".join(s.lower() for s in sorted(node.get("states", ())))
        objects.append(f"{node['class_name']} ({node_id})" + (f": {states}" if states else ""))
    lines.append("Task objects: " + ("; ".join(objects) if objects else "none"))
    return "\n".join(lines)
