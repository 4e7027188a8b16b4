"""The `thor` environment: a client of `sage-pddl thor-server` (protocol v1 over ZMQ REQ/REP).

    env = get_env("thor", host="127.0.0.1", port=5555, timeout=60.0)
    observation = env.reset(problem, domain=domain)      # or env.reset(None, task="ithor#K01")
    result = env.step(step_from_json({"action": "Pick", "object": "Apple"}))  # pddl.plans

Timeouts and restarts. Every request has a send and a receive timeout (`timeout` seconds) and
LINGER 0. A REQ socket that timed out is stuck waiting for its reply (ZMQ's strict send/recv
alternation), so the client closes it and builds a fresh one before doing anything else.
Idempotent commands (ping, reset, get_state, get_objects) are then retried once on the fresh
socket, which also reconnects to a server restarted on the same port. `step` is never retried (the
server may have executed it): a timed-out step raises `ThorTimeout`; a server restarted since the
reset answers `no-episode`, raised as `ThorServerError` (reset to start again). When nothing answers
at all the error says so and how to start a server.

Identity and token. The client connects under a routing id of its own (random, fixed for the
client's life), so the server keeps its episode apart from other clients' and finds it again
after a reconnect. A server started with `--token-file` needs its token: pass `token`, or set
`SAGE_PDDL_THOR_TOKEN`.

Replies are bounded: ZMQ drops one over `max_reply_bytes` (default 16 MiB) as it arrives, so
whatever answers on the port (another program squatting it) cannot make the client hold more;
such a reply counts as no answer. What the client sends, its token included, goes to whatever
listens on the port: check the endpoint, and use a port only you can bind on a shared host.

If `log` is given, the client appends the transition record the server returns with each step
(`sage_pddl.env.transitions`), so a remote run leaves the same log as a local one.
"""
from __future__ import annotations

import itertools
import os
import socket
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sage_pddl.pddl.limits import MAX_BYTES
from sage_pddl.pddl.model import Domain, PlanStep, Problem
from sage_pddl.pddl.plans import step_json

from ..base import EnvError, Fact, Observation, StepResult, parse_fact
from ..transitions import Transition, TransitionLog
from . import protocol
from .protocol import ProtocolError

TOKEN_ENV_VAR = "SAGE_PDDL_THOR_TOKEN"


class ThorUnavailable(EnvError):
    """No server answered (nothing listening, or it stopped answering)."""


class ThorTimeout(EnvError):
    """A non-idempotent request (step, close) timed out and was not retried."""


class ThorServerError(EnvError):
    """The server answered `ok: false`; `code` is the protocol error code."""

    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(f"thor-server error [{code}]: {message}")


class _Timeout(Exception):
    pass


class ThorClientEnv:
    """See the module docstring."""

    name = "thor"

    def __init__(self, host: str = "127.0.0.1", port: int = 5555, timeout: float = 60.0, *,
                 log: str | Path | None = None,
                 max_bytes: int = protocol.DEFAULT_MAX_BYTES, token: str | None = None,
                 max_reply_bytes: int = MAX_BYTES):
        import zmq  # start-up time: the thor-server command and its client load it on use

        if timeout <= 0:
            raise EnvError(f"thor client timeout must be positive, got {timeout}")
        self._zmq = zmq
        self.host, self.port, self.timeout = host, int(port), float(timeout)
        self.endpoint = f"tcp://{host}:{self.port}"
        self.max_bytes = max_bytes
        self.max_reply_bytes = max_reply_bytes
        # The process's shared context, which is never terminated: a context of our own
        # terminated by the garbage collector (a client dropped without `close`) blocks that
        # thread for good while a socket of it is not yet closed.
        self._context: Any = zmq.Context.instance()
        self._socket: Any = None
        self._ids = itertools.count(1)
        self._identity = b"sage-" + uuid.uuid4().hex.encode("ascii")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV_VAR) or None
        self.episode: str | None = None
        self._log = TransitionLog(log) if log else None
        self.last_transition: Transition | None = None
        self.server_id: str | None = None
        self._connect()

    # --- transport -------------------------------------------------------------------------

    def _connect(self) -> None:
        zmq = self._zmq
        if self._socket is not None:
            self._socket.close(linger=0)
        req = self._context.socket(zmq.REQ)
        millis = int(self.timeout * 1000)
        req.setsockopt(zmq.LINGER, 0)
        req.setsockopt(zmq.MAXMSGSIZE, self.max_reply_bytes)
        req.setsockopt(zmq.ROUTING_ID, self._identity)
        # A reply to an earlier socket of ours (same routing id, a timed-out request) must not
        # pass for this request's reply: REQ drops replies whose correlation id is not its own.
        req.setsockopt(zmq.REQ_CORRELATE, 1)
        req.setsockopt(zmq.SNDTIMEO, millis)
        req.setsockopt(zmq.RCVTIMEO, millis)
        req.connect(self.endpoint)
        self._socket = req

    def _exchange(self, payload: bytes) -> bytes:
        try:
            self._socket.send(payload)
            return self._socket.recv()
        except self._zmq.Again:
            raise _Timeout() from None

    def request(self, cmd: str, **fields: Any) -> dict:
        """Send one command, return the reply's fields; raises on timeouts and error replies."""
        message = protocol.request(cmd, next(self._ids), **fields)
        if self.token:
            message["token"] = self.token
        payload = protocol.encode(message)
        if len(payload) > self.max_bytes:
            raise EnvError(f"{cmd} request of {len(payload)} bytes exceeds the protocol limit of "
                           f"{self.max_bytes} bytes")
        attempts = 2 if cmd in protocol.IDEMPOTENT else 1
        for _attempt in range(attempts):
            try:
                raw = self._exchange(payload)
                break
            except _Timeout:
                self._connect()  # REQ after a timeout can neither send nor receive: rebuild it
        else:
            raise self._timeout_error(cmd, attempts)
        try:
            answer = protocol.decode_reply(raw)
        except ProtocolError as error:
            raise ThorServerError(error.code, error.message) from None
        if answer.get("episode") is not None:
            self.episode = str(answer["episode"])
        if not answer["ok"]:
            details = answer.get("error") or {}
            raise ThorServerError(str(details.get("code", "unknown")),
                                  str(details.get("message", "")))
        return answer

    def _timeout_error(self, cmd: str, attempts: int) -> EnvError:
        waited = f"{self.timeout:g}" if self.timeout != int(self.timeout) else f"{self.timeout:.1f}"
        if cmd in protocol.IDEMPOTENT:
            return ThorUnavailable(
                f"no sage-pddl thor-server answered at {self.endpoint} within {waited} s "
                f"({attempts} attempts); start one with "
                f"`sage-pddl thor-server --port {self.port}`")
        return ThorTimeout(
            f"the sage-pddl thor-server at {self.endpoint} did not answer {cmd!r} within "
            f"{waited} s; it was not retried because the server may have executed it "
            f"(reset to start the episode again)")

    # --- environment -----------------------------------------------------------------------

    def check(self, timeout: float = 3.0) -> None:
        """Fail fast when no server answers (ThorUnavailable): at once when nothing listens on
        the port (ZMQ itself would wait, reconnecting, for the whole timeout), else after one
        ping with a short timeout."""
        try:
            socket.create_connection((self.host, self.port), timeout=timeout).close()
        except OSError as error:
            raise ThorUnavailable(
                f"no sage-pddl thor-server listens at {self.endpoint} ({error.strerror or error}); "
                f"start one with `sage-pddl thor-server --port {self.port}`") from None
        saved, self.timeout = self.timeout, min(self.timeout, timeout)
        self._connect()
        try:
            self.ping()
        finally:
            self.timeout = saved
            self._connect()

    def ping(self) -> dict:
        answer = self.request("ping")
        self.server_id = answer.get("server_id")
        return answer

    def reset(self, problem: Problem | None = None, *, domain: Domain | str | None = None,
              task: str | None = None, hidden: Iterable[Any] | None = None,
              faults: Iterable[str] | None = None, scene: str | None = None) -> Observation:
        fields: dict[str, Any] = {}
        if task is not None:
            fields["task"] = task
            if domain is not None:
                fields["domain"] = domain if isinstance(domain, str) else domain.name
        elif problem is not None:
            fields["problem"] = _problem_text(problem)
            fields["domain"] = (_domain_text(domain) if isinstance(domain, Domain)
                                else domain or problem.domain_name)
        else:
            raise EnvError("reset needs a problem or a task reference")
        if hidden is not None:
            # start-up time: the thor-server command and its client load it on use
            from ..base import format_fact

            fields["hidden"] = [format_fact(parse_fact(f)) for f in hidden]
        if faults is not None:
            fields["faults"] = [str(f) for f in faults]
        if scene is not None:
            fields["scene"] = scene
        answer = self.request("reset", **fields)
        return Observation.from_json(answer.get("observation") or {})

    def step(self, step: PlanStep) -> StepResult:
        answer = self.request("step", step=step_json(step))
        result = StepResult.from_json(answer["result"])
        record = answer.get("transition")
        self.last_transition = Transition.from_json(record) if record else None
        if self.last_transition is not None and self._log is not None:
            self._log.append(self.last_transition)
        return result

    def state(self) -> dict:
        """The server's get_state reply: facts, goal_reached, step_count, observation."""
        return self.request("get_state")

    def true_state(self) -> frozenset[Fact]:
        return frozenset(parse_fact(f) for f in self.state().get("facts", ()))

    def goal_reached(self) -> bool | None:
        return self.state().get("goal_reached")

    def objects(self) -> list[dict]:
        return list(self.request("get_objects").get("objects", ()))

    def shutdown_server(self) -> None:
        """Ask the server to exit (the `close` command)."""
        self.request("close")

    def close(self) -> None:
        """Release this client's socket and log (the server keeps running)."""
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None
        if self._log is not None:
            self._log.close()


def _problem_text(problem: Problem) -> str:
    if problem.source:
        return problem.source
    # start-up time: the thor-server command and its client load it on use
    from sage_pddl.pddl import write_problem

    return write_problem(problem)


def _domain_text(domain: Domain) -> str:
    if domain.source:
        return domain.source
    # start-up time: the thor-server command and its client load it on use
    from sage_pddl.pddl import write_domain

    return write_domain(domain)
