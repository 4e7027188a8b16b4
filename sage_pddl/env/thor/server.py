"""`sage-pddl thor-server`: serve an environment backend over ZMQ (protocol v1).

    python -m sage_pddl.env.thor.server --port 5555 --backend symbolic [--bind 127.0.0.1]

A REP socket bound to `tcp://<bind>:<port>` (loopback unless `--bind` says otherwise; `--port 0`
picks a free port) answers one JSON request with one JSON reply (`sage_pddl.env.thor.protocol`,
docs/thor-protocol.md). The backend is any registered environment: `symbolic` (the gate
executes against the true state, no simulator needed, used by the tests) or `ai2thor`
(`sage_pddl.env.thor.ai2thor_backend`, needs the `thor` extra and a display or GPU).

Robustness: every request gets a reply. Malformed JSON, unknown commands, wrong fields, a
protocol-version mismatch and messages over `max_bytes` (default 1 MiB) get an error reply;
an exception inside the backend becomes a `backend-error` reply; the loop keeps serving.
Frames far beyond the limit (16 x max_bytes) are dropped by ZMQ itself (ZMQ_MAXMSGSIZE) so a
hostile peer cannot make the server allocate without bound; that peer sees a timeout. The
server stops cleanly (socket closed, backend closed, exit status 0) on SIGTERM, SIGINT and the
`close` command. When ready it prints `sage-pddl thor-server listening on <endpoint> (backend
<name>)` on stdout, flushed, which scripts and tests wait for.
"""
from __future__ import annotations

import argparse
import inspect
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sage_pddl.pddl.errors import SageError

from ..base import Observation, format_fact
from . import protocol
from .protocol import ProtocolError, Request

POLL_MS = 100  # how often the loop wakes to notice a stop signal


class ServerError(SageError):
    """The server cannot start (bad backend, port in use, ...)."""


class EpisodeHandler:
    """Turns validated requests into calls on one environment backend."""

    def __init__(self, env: Any, backend: str, domains_dirs: Sequence[str | Path] | None = None):
        self.env = env
        self.backend = backend
        self.domains_dirs = list(domains_dirs) if domains_dirs else None
        self.server_id = uuid.uuid4().hex[:12]
        self.task: str | None = None
        self.domain_name: str | None = None
        self._reset_params = set(inspect.signature(env.reset).parameters)

    def handle(self, request: Request) -> dict:
        method: Callable[[Request], dict] = getattr(self, "cmd_" + request.cmd)
        return method(request)

    def cmd_ping(self, request: Request) -> dict:
        return protocol.reply(request.id, server="sage-pddl", backend=self.backend,
                              server_id=self.server_id, protocol=protocol.PROTOCOL_VERSION)

    def cmd_close(self, request: Request) -> dict:
        return protocol.reply(request.id, closing=True)

    def cmd_reset(self, request: Request) -> dict:
        fields = request.fields
        options: dict[str, Any] = {}
        try:
            if "task" in fields:
                domain, problem, task_id, scene = self._from_task(fields["task"], fields.get("domain"))
            else:
                domain, problem = self._from_pddl(fields["domain"], fields["problem"])
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
            raise ProtocolError("bad-request", f"backend {self.backend!r} does not take "
                                f"{', '.join(unsupported)} at reset", request.id)
        try:
            observation: Observation = self.env.reset(problem, **options)
        except SageError as error:
            raise ProtocolError("bad-problem", str(error), request.id) from None
        self.task, self.domain_name = task_id, domain.name
        return protocol.reply(request.id, task=task_id, domain=domain.name,
                              observation=observation.to_json())

    def cmd_step(self, request: Request) -> dict:
        self._require_episode(request)
        result = self.env.step(request.fields["step"])  # unparsable steps are failed steps
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
        objects = describe() if describe else []
        return protocol.reply(request.id, objects=objects)

    def _require_episode(self, request: Request) -> None:
        if self.task is None:
            raise ProtocolError("no-episode", f"{request.cmd} before reset: this server "
                                f"(id {self.server_id}) has no episode; send reset first",
                                request.id)

    def _from_pddl(self, domain_text: str, problem_text: str) -> tuple[Any, Any]:
        from sage_pddl.pddl import parse_domain, parse_problem

        if "(" in domain_text:
            domain = parse_domain(domain_text, file="<reset.domain>")
        else:
            from sage_pddl.domains import load_domain

            domain = load_domain(domain_text.strip(), self.domains_dirs)
        return domain, parse_problem(problem_text, file="<reset.problem>")

    def _from_task(self, ref: str, domain_name: str | None) -> tuple[Any, Any, str, str | None]:
        from sage_pddl.domains import load_domain
        from sage_pddl.tasks import load_task, task_problem

        task = load_task(ref)
        domain = load_domain(domain_name or getattr(task, "domain", None) or "ithor",
                             self.domains_dirs)
        return domain, task_problem(task, domain), ref, getattr(task, "scene", None)


def _handle_frames(handler: EpisodeHandler, frames: list[bytes], max_bytes: int) -> tuple[dict, bool]:
    """One request in, one reply out; never raises. Returns (reply, stop_after_reply)."""
    request_id = None
    try:
        if len(frames) != 1:
            raise ProtocolError("bad-request", f"expected one frame per message, got {len(frames)}")
        request = protocol.decode_request(frames[0], max_bytes)
        request_id = request.id
        return handler.handle(request), request.cmd == "close"
    except ProtocolError as error:
        return protocol.error_reply(error.code, error.message, error.request_id or request_id), False
    except SageError as error:
        return protocol.error_reply("backend-error", str(error), request_id), False
    except Exception as error:  # the server must outlive any backend bug
        return protocol.error_reply("backend-error", f"{type(error).__name__}: {error}",
                                    request_id), False


def serve(port: int = 5555, bind: str = "127.0.0.1", backend: str = "symbolic", *,
          max_bytes: int = protocol.DEFAULT_MAX_BYTES,
          domains_dirs: Iterable[str | Path] | None = None, log: str | Path | None = None,
          backend_options: dict[str, Any] | None = None,
          on_ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None, handle_signals: bool = True) -> int:
    """Run the server until `close`, SIGTERM/SIGINT or `stop` is set; returns the exit status.

    `log` makes the backend write a transition log. `on_ready(endpoint)` is called once bound
    (default: print the "listening on" line). Signal handlers are installed only in the main
    thread (`handle_signals`).
    """
    import zmq

    from .. import get_env

    if max_bytes <= 0:
        raise ServerError(f"--max-bytes must be positive, got {max_bytes}")
    options = dict(backend_options or {})
    if log:
        options["log"] = log
    if domains_dirs and backend == "symbolic":
        options["domains_dirs"] = list(domains_dirs)
    env = get_env(backend, **options)
    handler = EpisodeHandler(env, backend, list(domains_dirs) if domains_dirs else None)

    stop = stop or threading.Event()
    previous: dict[int, Any] = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())

    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.MAXMSGSIZE, 16 * max_bytes)
    try:
        try:
            if port == 0:
                port = socket.bind_to_random_port(f"tcp://{bind}")
            else:
                socket.bind(f"tcp://{bind}:{port}")
        except zmq.ZMQError as error:
            raise ServerError(f"cannot listen on tcp://{bind}:{port}: {error}") from None
        endpoint = f"tcp://{bind}:{port}"
        if on_ready is None:
            print(f"sage-pddl thor-server listening on {endpoint} (backend {backend})", flush=True)
        else:
            on_ready(endpoint)
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        while not stop.is_set():
            try:
                events = dict(poller.poll(POLL_MS))
            except zmq.ZMQError as error:
                if error.errno == zmq.EINTR:  # a signal arrived during poll
                    continue
                raise
            if socket not in events:
                continue
            frames = socket.recv_multipart()
            reply, closing = _handle_frames(handler, frames, max_bytes)
            socket.send(protocol.encode(reply))
            if closing:
                break
        return 0
    finally:
        socket.close(linger=0)
        context.term()
        env.close()
        for signum, handler_before in previous.items():
            signal.signal(signum, handler_before)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sage-pddl thor-server",
                                     description="Serve an environment backend over ZMQ.")
    parser.add_argument("--port", type=int, default=5555, help="TCP port (0: pick a free one)")
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to listen on (default loopback; '*' for all interfaces)")
    parser.add_argument("--backend", default="symbolic", choices=["symbolic", "ai2thor"])
    parser.add_argument("--max-bytes", type=int, default=protocol.DEFAULT_MAX_BYTES,
                        help="largest accepted request in bytes (default 1 MiB)")
    parser.add_argument("--domains-dir", action="append", default=[],
                        help="extra folder of domain files (repeatable)")
    parser.add_argument("--log", help="append a JSONL transition log here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m sage_pddl.env.thor.server` and `sage-pddl thor-server`."""
    args = build_parser().parse_args(argv)
    try:
        return serve(args.port, args.bind, args.backend, max_bytes=args.max_bytes,
                     domains_dirs=args.domains_dir or None, log=args.log)
    except SageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
