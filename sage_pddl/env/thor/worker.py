"""One client's episode of the thor-server, run in a worker process of its own.

The server (`sage_pddl.env.thor.server`) keeps a worker per client identity and hands it the
requests that touch the environment (`reset`, `step`, `get_state`, `get_objects`). The work
that one request can cause (parse, ground, simulate) thus runs outside the process that
answers `ping`, watches the clock and honours SIGTERM: a request over its time budget is
answered `timeout` and its worker killed, and no client can stall another.

Inside the worker, three limits bound what a request can make it do:

* grounding enumerates at most `max_ground` quantifier instances per formula
  (`pddl.limits.MAX_GROUND`, the server's `--max-atoms`), checked before anything is built;
* the process's address space is capped at `max_memory` bytes (`--max-memory`); a request
  that needs more gets a `too-large` reply and the worker ends;
* names only: `domain` is inline PDDL or the name of a domain in the bundled folder or a
  `--domains-dir`, and `task` a reference into a bundled task set (`ithor#K01`). A path is
  read only when it lies inside an `--allow-paths` folder. An error in a file the client did
  not send is reported without the file's content (the detail goes to the server's stderr).

`serve_episode(connection, settings)` is the worker's loop: it receives `Request`s on a
`multiprocessing` connection and answers each with `(reply, alive)`, where `alive` is False
when the worker ends after this reply.
"""
from __future__ import annotations

import inspect
import resource
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sage_pddl.domains import key, list_domains, load_domain
from sage_pddl.pddl import limits, parse_domain, parse_problem
from sage_pddl.pddl.errors import GroundingTooLarge, PlanSyntaxError, SageError
from sage_pddl.pddl.model import Domain, PlanStep, Problem
from sage_pddl.pddl.plans import step_from_value
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.placement import with_placement
from sage_pddl.tasks.taskset import BUNDLED

from .. import get_env
from ..base import Environment, Observation, format_fact
from ..episode import GatedEnv
from . import protocol
from .protocol import ProtocolError, Request


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to build its backend and the limits it runs under."""

    backend: str
    backend_options: dict[str, Any] = field(default_factory=dict)
    domains_dirs: tuple[Path, ...] = ()
    allow_paths: tuple[Path, ...] = ()
    max_ground: int = limits.MAX_GROUND
    max_memory: int | None = None  # bytes; None: no cap
    placement: str | None = None
    """The placement setting of the problems made from task references (tasks/placement.py;
    None: each task's own or its set's)."""


class EpisodeHandler:
    """Turns validated episode requests into calls on one environment backend."""

    def __init__(self, env: Environment, settings: WorkerSettings):
        self.env = env
        self.settings = settings
        self.task: str | None = None
        self.domain_name: str | None = None
        self._reset_params = set(inspect.signature(env.reset).parameters)

    def handle(self, request: Request) -> dict:
        method: Callable[[Request], dict] = getattr(self, "cmd_" + request.cmd)
        return method(request)

    def cmd_reset(self, request: Request) -> dict:
        fields = request.fields
        options: dict[str, Any] = {}
        try:
            if "task" in fields:
                domain, problem, task_id, scene = self._from_task(fields["task"], fields.get("domain"))
            else:
                domain = self._domain(fields["domain"])
                problem = _parse_problem(fields["problem"])
                task_id, scene = problem.name, None
        except SageError as error:
            raise ProtocolError("bad-problem", str(error), request.id) from None
        scene = fields.get("scene", scene)
        if "hidden" in fields:
            options["hidden"] = fields["hidden"]
        if "faults" in fields:
            options["faults"] = list(fields["faults"])
        if scene is not None and "scene" in self._reset_params:
            options["scene"] = scene
        options["domain"] = domain
        options["task"] = task_id
        unsupported = sorted(k for k in options if k not in self._reset_params)
        if unsupported:
            raise ProtocolError("bad-request", f"backend {self.settings.backend!r} does not "
                                f"take {', '.join(unsupported)} at reset", request.id)
        self.task = None  # a failed reset leaves no half-made episode behind
        try:
            observation: Observation = self.env.reset(problem, **options)
        except GroundingTooLarge:
            raise
        except SageError as error:
            raise ProtocolError("bad-problem", str(error), request.id) from None
        self.task, self.domain_name = task_id, domain.name
        return protocol.reply(request.id, task=task_id, domain=domain.name,
                              observation=observation.to_json())

    def cmd_step(self, request: Request) -> dict:
        self._require_episode(request)
        try:
            step = step_from_value(request.fields["step"])  # a JSON step or its text
        except PlanSyntaxError as error:  # an unparsable step is a failed step of the episode
            if not isinstance(self.env, GatedEnv):
                raise ProtocolError("bad-request", f"unparsable step: {error.message}",
                                    request.id) from None
            text = str(request.fields["step"])
            result = self.env.refuse(PlanStep(text, (), 0, text), f"unparsable step: "
                                     f"{error.message}", "unparsable-step")
        else:
            result = self.env.step(step)
        transition = getattr(self.env, "last_transition", None)
        return protocol.reply(request.id, result=result.to_json(),
                              transition=transition.to_json() if transition else None)

    def cmd_get_state(self, request: Request) -> dict:
        self._require_episode(request)
        observe = getattr(self.env, "observe", None)
        return protocol.reply(
            request.id, task=self.task, domain=self.domain_name,
            facts=sorted(format_fact(f) for f in self.env.true_state()),
            goal_reached=self.env.goal_reached(),
            step_count=getattr(self.env, "step_count", None),
            observation=observe().to_json() if observe else None)

    def cmd_get_objects(self, request: Request) -> dict:
        self._require_episode(request)
        describe = getattr(self.env, "describe_objects", None)
        return protocol.reply(request.id, objects=describe() if describe else [])

    def _require_episode(self, request: Request) -> None:
        if self.task is None:
            raise ProtocolError("no-episode", f"{request.cmd} before reset: this client has "
                                "no episode on this server; send reset first", request.id)

    # -- what a client may name ---------------------------------------------------------------

    def _allowed_file(self, text: str, what: str) -> Path:
        """`text` as a file inside an `--allow-paths` folder; SageError otherwise."""
        if not self.settings.allow_paths:
            raise SageError(f"{what} {text!r}: this server reads no paths a client names "
                            "(start it with --allow-paths DIR to allow a folder)")
        path = Path(text).expanduser().resolve()
        if not any(path.is_relative_to(folder) for folder in self.settings.allow_paths):
            raise SageError(f"{what} {text!r} lies outside the folders this server may read")
        if not path.is_file():
            raise SageError(f"{what} {text!r}: no such file")
        return path

    def _domain(self, text: str) -> Domain:
        """Inline PDDL, a known domain name, or a file in an allowed folder."""
        if "(" in text:
            return parse_domain(text, file="<reset.domain>")
        name = text.strip()
        known = list_domains(list(self.settings.domains_dirs) or None)
        path = next((p for n, p in known.items() if key(n) == key(name)), None)
        if path is None:
            if not any(sep in name for sep in "/\\") and not name.lower().endswith(".pddl"):
                raise SageError(f"unknown domain {name!r}: this server knows "
                                f"{', '.join(sorted(known, key=key)) or 'none'}")
            path = self._allowed_file(name, "domain")
        return _load_quietly(lambda: load_domain(path), f"domain {name!r}")

    def _from_task(self, ref: str, domain_name: str | None
                   ) -> tuple[Domain, Problem, str, str | None]:
        where, _, task_id = ref.rpartition("#")
        if not where:
            raise SageError(f"task reference {ref!r}: expected SET#TASK_ID, e.g. ithor#K01")
        if where.lower() not in BUNDLED:
            self._allowed_file(where, "task set")
        tasks = _load_quietly(lambda: load_taskset(where), f"task set {where!r}")
        task = next((t for t in tasks if t.task_id.lower() == task_id.lower()), None)
        if task is None:
            raise SageError(f"task reference {ref!r}: no task {task_id!r} in {where}")
        task = with_placement([task], self.settings.placement)[0]
        domain = self._domain(domain_name or getattr(task, "domain", None) or "ithor")
        return domain, task_problem(task, domain), ref, getattr(task, "scene", None)


def _parse_problem(text: str) -> Problem:
    return parse_problem(text, file="<reset.problem>")


T = TypeVar("T")


def _load_quietly(load: Callable[[], T], what: str) -> T:
    """`load()`, with an error in a server-side file reported without quoting that file."""
    try:
        return load()
    except SageError as error:
        print(f"thor-server: {what}: {error}", file=sys.stderr, flush=True)
        raise SageError(f"{what} cannot be loaded on the server (the server's log has the "
                        "detail)") from None


def handle_request(handler: EpisodeHandler, request: Request) -> tuple[dict, bool]:
    """One request in, `(reply, alive)` out; never raises."""
    try:
        return handler.handle(request), True
    except ProtocolError as error:
        return protocol.error_reply(error.code, error.message, request.id), True
    except GroundingTooLarge as error:
        return protocol.error_reply("too-large", error.message, request.id), True
    except MemoryError:
        return protocol.error_reply(
            "too-large", f"{request.cmd} needed more memory than this server allows per "
            "episode (--max-memory); the episode has ended", request.id), False
    except SageError as error:
        return protocol.error_reply("backend-error", str(error), request.id), True
    except RecursionError:
        return protocol.error_reply("too-large", f"{request.cmd}: input nested too deeply",
                                    request.id), True
    except Exception as error:  # the episode must outlive any backend bug
        return protocol.error_reply("backend-error", f"{type(error).__name__}: {error}",
                                    request.id), True


def _apply_limits(settings: WorkerSettings) -> None:
    limits.MAX_GROUND = settings.max_ground
    if settings.max_memory:
        resource.setrlimit(resource.RLIMIT_AS, (settings.max_memory, settings.max_memory))


def serve_episode(connection: Any, settings: WorkerSettings) -> None:
    """The worker's loop: answer requests from `connection` until it closes or says None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    _apply_limits(settings)
    handler: EpisodeHandler | None = None
    try:
        while True:
            try:
                request = connection.recv()
            except (EOFError, OSError):
                return  # the server is gone
            if request is None:
                return
            if handler is None:
                try:
                    handler = EpisodeHandler(get_env(settings.backend,
                                                     **settings.backend_options), settings)
                except Exception as error:  # noqa: BLE001 - reported to the client
                    connection.send((protocol.error_reply(
                        "backend-error", f"the {settings.backend} backend did not start: "
                        f"{error}", request.id), False))
                    return
            reply, alive = handle_request(handler, request)
            connection.send((reply, alive))
            if not alive:
                return
    finally:
        if handler is not None:
            handler.env.close()


def default_max_memory(backend: str) -> int | None:
    """1 GiB for the symbolic backend; none for simulators that map large GPU buffers."""
    return 1 << 30 if backend == "symbolic" else None


__all__: Sequence[str] = ["EpisodeHandler", "WorkerSettings", "default_max_memory",
                          "handle_request", "serve_episode"]
