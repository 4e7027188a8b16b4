"""`sage-pddl thor-server`: serve an environment backend over ZMQ (protocol v1).

    sage-pddl thor-server --port 5555 --backend symbolic [--bind 127.0.0.1] [--token-file F]

Design: one process answers the socket, one worker process per client runs its episode.

* The server process owns a ROUTER socket bound to `tcp://<bind>:<port>` (loopback unless
  `--bind` says otherwise; `--port 0` picks a free port). It decodes and checks every request
  (`protocol.decode_request`: size, JSON, version, fields, the token), answers `ping` and
  `close` itself, and passes episode requests to the client's worker. It never parses PDDL
  or grounds anything, so it answers `ping`, serves other clients and honours SIGTERM and
  SIGINT within `POLL_MS` while any request works.
* A client is its ZMQ routing id (`ThorClientEnv` sets a stable one, so a reconnect after a
  timeout finds its episode again). Each client gets its own worker process
  (`sage_pddl.env.thor.worker`) and so its own episode: two clients never reset each other.
  At most `--max-clients` workers live at once; one idle for `--idle-timeout` is ended, one
  whose client has disconnected (ZMQ's socket monitor, and the connection each message came
  on) after `--reclaim-after`, and when every slot is taken a new client's reset ends the
  episode idle longest if that is longer than `--reclaim-after`.
* Before authentication a peer can hold little: a frame over `--max-bytes` is refused by ZMQ
  itself as it arrives (the connection is dropped, no reply: a partial frame holds at most
  `--max-bytes`), at most `--max-connections` connections are open at once (idle or
  unauthenticated ones evicted to make room: `admission.py`), and with `--token-file` a
  request over `UNCHECKED_BYTES` is refused `unauthorized` unless its bytes hold the token,
  before any JSON is read.
* Every episode request runs under a time budget (`--reset-timeout` for reset,
  `--step-timeout` for the others). A worker over its budget is killed and the client gets a
  `timeout` reply; grounding is capped at `--max-atoms` quantifier instances and the
  worker's memory at `--max-memory`, both answered `too-large`.
* With `--token-file`, every request must carry the file's token in `"token"`; others get
  `unauthorized`. Binding to a non-loopback address without a token prints a warning.

Every request gets exactly one reply, and the reply is always encodable: JSON is written
ASCII-escaped, so a lone surrogate in an `id` travels back escaped. A failure while replying
is logged on stderr and the loop goes on, as is any failure while handling one request or
one worker's answer (running out of file descriptors while starting a worker is answered
`busy`). When ready it prints `sage-pddl thor-server listening on <endpoint> (backend <name>)`
on stdout, flushed, which scripts and tests wait for. docs/thor-protocol.md: the protocol.
"""
from __future__ import annotations

import argparse
import errno
import hmac
import json
import multiprocessing
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sage_pddl.pddl import limits
from sage_pddl.pddl.errors import SageError
from sage_pddl.tasks.placement import checked_placement

from . import protocol
from .admission import ConnectionGuard, connection_cap
from .protocol import ProtocolError, Request
from .worker import WorkerSettings, default_max_memory, serve_episode

POLL_MS = 100  # how often the loop wakes to notice a stop signal or an expired budget
LOOPBACK = ("127.0.0.1", "localhost", "::1")
UNCHECKED_BYTES = 4096
"""With a token, a request larger than this is read only if its bytes hold the token."""


class ServerError(SageError):
    """The server cannot start (bad backend, port in use, unreadable token file, ...)."""


@dataclass(frozen=True)
class ServerLimits:
    """The budgets the server enforces; the CLI flags of the same names set them."""

    max_bytes: int = protocol.DEFAULT_MAX_BYTES
    reset_timeout: float = 10.0
    step_timeout: float = 10.0
    max_atoms: int = limits.MAX_GROUND
    max_memory: int | None = None  # bytes; None: the backend's default
    max_clients: int = 8
    idle_timeout: float = 900.0
    reclaim_after: float = 60.0
    max_connections: int = 64

    def __post_init__(self) -> None:
        for name in ("max_bytes", "reset_timeout", "step_timeout", "max_atoms", "max_clients",
                     "idle_timeout", "reclaim_after", "max_connections"):
            if getattr(self, name) <= 0:
                raise ServerError(f"--{name.replace('_', '-')} must be positive, "
                                  f"got {getattr(self, name)}")
        if self.max_memory is not None and self.max_memory <= 0:
            raise ServerError(f"--max-memory must be positive, got {self.max_memory >> 20} MiB")


@dataclass
class Episode:
    """One client's worker, and the request it is working on."""

    episode_id: str
    process: Any
    connection: Any
    last_used: float
    envelope: list[bytes] = field(default_factory=list)  # the routing frames of the pending reply
    request: Request | None = None
    deadline: float = 0.0
    # A client whose request timed out sends its next one while the worker still runs the
    # old one; that next request waits here and runs as soon as the worker is free.
    waiting: tuple[list[bytes], Request] | None = None
    connection_fd: int = -1  # the client's connection its last message came on (ZMQ_SRCFD)
    gone_since: float | None = None  # when that connection closed (None: open, or unknown)

    @property
    def busy(self) -> bool:
        return self.request is not None

    def stop(self) -> None:
        """End the worker: ask politely if idle, kill if it does not go at once."""
        if not self.busy:
            try:
                self.connection.send(None)
            except (OSError, ValueError):
                pass
            self.process.join(0.2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(1.0)
        self.connection.close()


def _worker_context() -> Any:
    """Workers fork from a clean fork server where there is one (fast, and no ZMQ threads are
    inherited); elsewhere they are spawned."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["sage_pddl.env.thor.worker", "sage_pddl.env.symbolic"])
        return context
    return multiprocessing.get_context("spawn")


class ThorServer:
    """The socket loop: decode, authorise, dispatch to workers, enforce budgets, reply."""

    def __init__(self, socket: Any, settings: WorkerSettings, server_limits: ServerLimits,
                 token: bytes | None = None, log: Callable[[str], None] | None = None):
        self.socket = socket
        self.settings = settings
        self.limits = server_limits
        self.token = token
        self.server_id = uuid.uuid4().hex[:12]
        self.episodes: dict[bytes, Episode] = {}
        self.authorised = False  # whether the last request passed the token check
        self._count = 0
        self._context = _worker_context()
        self._log = log or (lambda text: print(f"thor-server: {text}", file=sys.stderr,
                                               flush=True))

    # -- replies ------------------------------------------------------------------------------

    def _send(self, envelope: list[bytes], reply: dict) -> None:
        try:
            payload = protocol.encode(reply)
        except (TypeError, ValueError) as error:  # a backend put something odd in a reply
            self._log(f"reply not encodable ({error}); sent an error instead")
            payload = protocol.encode(protocol.error_reply(
                "backend-error", "the reply could not be encoded", None))
        try:
            self.socket.send_multipart([*envelope, payload])
        except Exception as error:  # noqa: BLE001 - a vanished peer must not stop the loop
            self._log(f"reply not sent: {type(error).__name__}: {error}")

    # -- requests -----------------------------------------------------------------------------

    def on_message(self, frames: list[bytes]) -> bool:
        """Handle one incoming message; returns True when the server should stop."""
        identity = frames[0]
        # A REQ peer's routing frames end with an empty delimiter (with REQ_CORRELATE a
        # request-id frame comes first); a DEALER peer may send the payload straight away.
        split = frames.index(b"", 1) + 1 if b"" in frames[1:] else 1
        envelope, body = frames[:split], frames[split:]
        request_id, self.authorised = None, False
        try:
            if len(body) != 1:
                raise ProtocolError("bad-request",
                                    f"expected one frame per message, got {len(body)}")
            if (self.token is not None and len(body[0]) > UNCHECKED_BYTES
                    and not self._holds_token(body[0])):  # no JSON read for such a request
                raise ProtocolError("unauthorized", "this server needs the token from its "
                                    "--token-file in the request's 'token' field")
            request = protocol.decode_request(body[0], self.limits.max_bytes)
            request_id = request.id
            self._authorise(request)
            self.authorised = True
            if request.cmd == "ping":
                self._send(envelope, self._ping(request, identity))
                return False
            if request.cmd == "close":
                self._send(envelope, protocol.reply(request.id, closing=True))
                return True
            self._dispatch(identity, envelope, request)
        except ProtocolError as error:
            self._send(envelope, protocol.error_reply(error.code, error.message,
                                                      error.request_id or request_id))
        except Exception as error:  # noqa: BLE001 - one request must not end every episode
            self._log(f"request failed: {type(error).__name__}: {error}")
            self._send(envelope, protocol.error_reply(
                "backend-error", "the server could not handle this request", request_id))
        return False

    def _holds_token(self, raw: bytes) -> bool:
        """The frame's bytes hold the token as written in JSON (plain, or ASCII-escaped)."""
        assert self.token is not None
        text = self.token.decode("utf-8", "surrogateescape")
        escaped = json.dumps(text, ensure_ascii=True)[1:-1].encode("ascii")
        return self.token in raw or escaped in raw

    def _authorise(self, request: Request) -> None:
        if self.token is None:
            return
        given = request.token.encode("utf-8", "surrogatepass") if request.token else b""
        if not hmac.compare_digest(given, self.token):
            raise ProtocolError("unauthorized", "this server needs the token from its "
                                "--token-file in the request's 'token' field", request.id)

    def _ping(self, request: Request, identity: bytes) -> dict:
        episode = self.episodes.get(identity)
        return protocol.reply(request.id, server="sage-pddl", backend=self.settings.backend,
                              server_id=self.server_id, protocol=protocol.PROTOCOL_VERSION,
                              episode=episode.episode_id if episode else None,
                              clients=len(self.episodes))

    def _dispatch(self, identity: bytes, envelope: list[bytes], request: Request) -> None:
        episode = self.episodes.get(identity)
        if episode is None:
            if request.cmd != "reset":
                raise ProtocolError("no-episode", f"{request.cmd} before reset: this client "
                                    f"has no episode on this server (id {self.server_id}); "
                                    "send reset first", request.id)
            episode = self._start_episode(identity, request)
        if episode.busy:
            if episode.waiting is not None:  # superseded: its client has given up on it
                superseded_envelope, superseded = episode.waiting
                self._send(superseded_envelope, protocol.error_reply(
                    "busy", "superseded by a later request from the same client",
                    superseded.id))
            episode.waiting = (envelope, request)
            return
        self._run(identity, episode, envelope, request)

    def _run(self, identity: bytes, episode: Episode, envelope: list[bytes],
             request: Request) -> None:
        if request.cmd == "reset":
            self._count += 1
            episode.episode_id = f"{self.server_id}-{self._count}"
        budget = self.limits.reset_timeout if request.cmd == "reset" else self.limits.step_timeout
        try:
            episode.connection.send(request)
        except (OSError, ValueError):
            self._end(identity)
            raise ProtocolError("backend-error", "the episode's worker has stopped; send "
                                "reset to start again", request.id) from None
        episode.envelope, episode.request = envelope, request
        episode.deadline = time.monotonic() + budget

    def _start_episode(self, identity: bytes, request: Request) -> Episode:
        self.reap_idle()
        if len(self.episodes) >= self.limits.max_clients:
            self._reclaim_one()
        if len(self.episodes) >= self.limits.max_clients:
            raise ProtocolError("busy", f"this server already runs {len(self.episodes)} "
                                "episodes (--max-clients), none idle for --reclaim-after; "
                                "try again later", request.id)
        try:  # EMFILE, ENFILE: no descriptors left for a worker's pipe or its start
            ours, theirs = self._context.Pipe()
            try:
                process = self._context.Process(target=serve_episode,
                                                args=(theirs, self.settings),
                                                daemon=True, name="thor-episode")
                process.start()
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()
        except OSError as error:
            raise ProtocolError("busy", f"the server cannot start a worker now "
                                f"({error.strerror or error}); try again later",
                                request.id) from None
        episode = Episode("", process, ours, time.monotonic())
        self.episodes[identity] = episode
        return episode

    # -- workers ------------------------------------------------------------------------------

    def on_worker(self, identity: bytes) -> None:
        """The worker of `identity` has answered (or died)."""
        episode = self.episodes[identity]
        request = episode.request
        assert request is not None
        try:
            reply, alive = episode.connection.recv()
        except Exception:  # noqa: BLE001 - EOF, a broken pipe, a reply that does not unpickle
            code = episode.process.exitcode
            reply, alive = protocol.error_reply(
                "backend-error", f"the episode's worker stopped (exit code {code}); send "
                "reset to start again", request.id), False
        reply["episode"] = episode.episode_id
        episode.request, episode.last_used = None, time.monotonic()
        self._send(episode.envelope, reply)
        if not alive:
            self._end(identity)
        elif episode.waiting is not None:
            envelope, waiting = episode.waiting
            episode.waiting = None
            try:
                self._run(identity, episode, envelope, waiting)
            except ProtocolError as error:
                self._send(envelope, protocol.error_reply(error.code, error.message, waiting.id))

    def check_deadlines(self) -> None:
        now = time.monotonic()
        for identity, episode in list(self.episodes.items()):
            if episode.request is not None and now > episode.deadline:
                request = episode.request
                budget = "--reset-timeout" if request.cmd == "reset" else "--step-timeout"
                self._send(episode.envelope, protocol.error_reply(
                    "timeout", f"{request.cmd} ran past this server's time budget ({budget}); "
                    "the episode has ended, send reset to start again", request.id))
                self._end(identity)

    def reap_idle(self) -> None:
        """End the episodes idle past `--idle-timeout`, and those whose client disconnected
        over `--reclaim-after` ago without coming back."""
        now = time.monotonic()
        for identity, episode in list(self.episodes.items()):
            gone = episode.gone_since is not None and \
                now - max(episode.gone_since, episode.last_used) > self.limits.reclaim_after
            if not episode.busy and (gone or now - episode.last_used > self.limits.idle_timeout):
                self._end(identity)

    def _reclaim_one(self) -> None:
        """Every slot is taken: end the episode idle longest, if longer than `--reclaim-after`
        (so a handful of client ids cannot hold the server for the whole idle timeout)."""
        idle = [(episode.last_used, identity) for identity, episode in self.episodes.items()
                if not episode.busy]
        if idle:
            last_used, identity = min(idle)
            if time.monotonic() - last_used > self.limits.reclaim_after:
                self._log("every episode slot is taken: ended the one idle longest")
                self._end(identity)

    def seen_on(self, identity: bytes, fd: int) -> None:
        """A message of `identity` came on the connection `fd`."""
        episode = self.episodes.get(identity)
        if episode is not None:
            episode.connection_fd, episode.gone_since = fd, None

    def disconnected(self, fd: int) -> None:
        """The connection `fd` closed: its clients' episodes are reclaimed unless they come
        back (a client that timed out reconnects under the same id)."""
        now = time.monotonic()
        for episode in self.episodes.values():
            if episode.connection_fd == fd and episode.gone_since is None:
                episode.gone_since = now

    def _end(self, identity: bytes) -> None:
        episode = self.episodes.pop(identity, None)
        if episode is None:
            return
        if episode.waiting is not None:
            envelope, waiting = episode.waiting
            self._send(envelope, protocol.error_reply(
                "no-episode", "the episode ended before this request ran; send reset to start "
                "again", waiting.id))
        episode.stop()

    def close(self) -> None:
        for identity in list(self.episodes):
            self._end(identity)

    def busy_connections(self) -> dict[int, bytes]:
        return {episode.connection.fileno(): identity
                for identity, episode in self.episodes.items() if episode.busy}


def read_token(path: str | Path) -> bytes:
    """The shared secret in `path` (surrounding whitespace dropped); ServerError if unusable."""
    try:
        token = Path(path).read_bytes().strip()
    except OSError as error:
        raise ServerError(f"--token-file {path}: {error.strerror or error}") from None
    if not token:
        raise ServerError(f"--token-file {path}: the file is empty")
    return token


def serve(port: int = 5555, bind: str = "127.0.0.1", backend: str = "symbolic", *,
          server_limits: ServerLimits | None = None,
          domains_dirs: Sequence[str | Path] | None = None,
          allow_paths: Sequence[str | Path] | None = None, token_file: str | Path | None = None,
          log: str | Path | None = None, backend_options: dict[str, Any] | None = None,
          on_ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None, handle_signals: bool = True,
          placement: str | None = None) -> int:
    """Run the server until `close`, SIGTERM/SIGINT or `stop` is set; returns the exit status.

    `log` makes the backend write a transition log. `on_ready(endpoint)` is called once bound
    (default: print the "listening on" line). Signal handlers are installed only in the main
    thread (`handle_signals`). `placement`: the `--placement` of problems made from task
    references (None: each set's own); a problem sent whole carries its own, tasks/placement.py.
    """
    import zmq  # start-up time: the thor-server command and its client load it on use

    from .. import list_envs  # start-up time: the thor-server command and its client load it on use

    server_limits = server_limits or ServerLimits()
    if backend not in list_envs() or backend == "thor":
        raise ServerError(f"unknown backend {backend!r}; choose symbolic or ai2thor")
    if backend == "ai2thor" and not (backend_options or {}).get("controller_factory"):
        # start-up time: the thor-server command and its client load it on use
        from .ai2thor_backend import require_ai2thor

        require_ai2thor()  # a given controller factory (a test's fake) needs no ai2thor
    token = read_token(token_file) if token_file else None
    if token is None and bind not in LOOPBACK:
        print(f"thor-server: warning: listening on {bind} without --token-file: any host that "
              "reaches this port can run episodes and stop the server", file=sys.stderr,
              flush=True)
    options = dict(backend_options or {})
    if log:
        options["log"] = str(log)
    named = [("--domains-dir", d) for d in domains_dirs or ()]
    named += [("--allow-paths", p) for p in allow_paths or ()]
    for flag, folder in named:  # before resolving: a symlink loop is no folder, not a crash
        if not Path(folder).is_dir():
            raise ServerError(f"{flag} {folder}: no such folder")
    dirs = tuple(Path(d).resolve() for d in domains_dirs or ())
    if dirs and backend == "symbolic":
        options["domains_dirs"] = [str(d) for d in dirs]
    max_memory = server_limits.max_memory or default_max_memory(backend)
    placement = placement and checked_placement(placement, "--placement")
    settings = WorkerSettings(backend, options, dirs,
                              tuple(Path(p).resolve() for p in allow_paths or ()),
                              server_limits.max_atoms, max_memory, placement)

    stop = stop or threading.Event()
    previous: dict[int, Any] = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())

    context = zmq.Context()
    socket = context.socket(zmq.ROUTER)
    socket.setsockopt(zmq.LINGER, 0)
    # ZMQ drops a frame over the limit as its header arrives: a peer that sends most of a
    # huge frame and never the rest holds at most this much
    socket.setsockopt(zmq.MAXMSGSIZE, server_limits.max_bytes)
    socket.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a client reconnecting under its id takes over
    host = bind.strip("[]")
    if ":" in host:  # an IPv6 address (`::1`, `::`)
        socket.setsockopt(zmq.IPV6, 1)
        host = f"[{host}]"
    cap, lowered = connection_cap(server_limits.max_connections, server_limits.max_clients)
    if lowered:
        print(f"thor-server: {lowered}", file=sys.stderr, flush=True)
    guard = ConnectionGuard(context, socket, cap)
    server = ThorServer(socket, settings, server_limits, token)
    try:
        try:
            if port == 0:
                port = socket.bind_to_random_port(f"tcp://{host}")
            else:
                socket.bind(f"tcp://{host}:{port}")
        except zmq.ZMQError as error:
            raise ServerError(f"cannot listen on tcp://{host}:{port}: {error}") from None
        endpoint = f"tcp://{host}:{port}"
        if on_ready is None:
            print(f"sage-pddl thor-server listening on {endpoint} (backend {backend})", flush=True)
        else:
            on_ready(endpoint)
        while not stop.is_set():
            poller = zmq.Poller()
            for listened in (socket, guard.handler, guard.monitor):
                poller.register(listened, zmq.POLLIN)
            workers = server.busy_connections()
            for fd in workers:
                poller.register(fd, zmq.POLLIN)
            try:
                events = dict(poller.poll(POLL_MS))
            except zmq.ZMQError as error:
                if error.errno == errno.EINTR:  # a signal arrived during poll
                    continue
                raise
            if guard.handler in events:
                guard.answer()
            guard.read_events()
            for fd in guard.closed:
                server.disconnected(fd)
            guard.closed.clear()
            for fd, identity in workers.items():
                if fd in events:
                    server.on_worker(identity)
            server.check_deadlines()
            server.reap_idle()
            if socket in events:
                frames = socket.recv_multipart(copy=False)
                if server.on_message([frame.bytes for frame in frames]):
                    break
                fd = frames[-1].get(zmq.SRCFD)
                server.seen_on(frames[0].bytes, fd)
                guard.request_on(fd, trusted=server.authorised)
        return 0
    finally:
        server.close()
        guard.close()
        socket.close(linger=0)
        context.term()
        for number, handler_before in previous.items():
            signal.signal(number, handler_before)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options, shared by `sage-pddl thor-server` and `python -m` of this module."""
    defaults = ServerLimits()
    parser.add_argument("--port", type=protocol.port_number, default=5555,
                        help="TCP port (0: pick a free one; default 5555)")
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to listen on (default loopback; '*' for all interfaces)")
    parser.add_argument("--backend", default="symbolic", choices=["symbolic", "ai2thor"],
                        help="symbolic (default: the gate executes against the true state) or "
                             "ai2thor (needs the 'thor' extra and a display or GPU)")
    parser.add_argument("--token-file", metavar="FILE",
                        help="require the token in FILE in every request")
    parser.add_argument("--allow-paths", action="append", default=[], metavar="DIR",
                        help="let clients name domain and task files inside DIR (repeatable; "
                             "default: names of bundled and --domains-dir domains only)")
    parser.add_argument("--max-bytes", type=int, default=defaults.max_bytes,
                        help=f"largest accepted request in bytes (default {defaults.max_bytes:,})")
    parser.add_argument("--reset-timeout", type=float, default=defaults.reset_timeout,
                        metavar="SECONDS",
                        help=f"time budget of a reset (default {defaults.reset_timeout:g})")
    parser.add_argument("--step-timeout", type=float, default=defaults.step_timeout,
                        metavar="SECONDS", help="time budget of any other episode request "
                                                f"(default {defaults.step_timeout:g})")
    parser.add_argument("--max-atoms", type=int, default=defaults.max_atoms,
                        help="most quantifier instances grounded per formula "
                             f"(default {defaults.max_atoms:,})")
    parser.add_argument("--max-memory", type=int, default=None, metavar="MIB",
                        help="address-space cap of each episode's worker in MiB (default "
                             f"{(default_max_memory('symbolic') or 0) >> 20} for symbolic, none "
                             "for ai2thor)")
    parser.add_argument("--max-clients", type=int, default=defaults.max_clients,
                        help=f"episodes served at once (default {defaults.max_clients})")
    parser.add_argument("--idle-timeout", type=float, default=defaults.idle_timeout,
                        metavar="SECONDS",
                        help=f"end an episode idle this long (default {defaults.idle_timeout:g})")
    parser.add_argument("--reclaim-after", type=float, default=defaults.reclaim_after,
                        metavar="SECONDS", help="end an episode whose client disconnected this "
                        "long ago, or, when every slot is taken, the one idle longest if idle "
                        f"this long (default {defaults.reclaim_after:g})")
    parser.add_argument("--max-connections", type=int, default=defaults.max_connections,
                        help="connections open at once, authenticated or not "
                             f"(default {defaults.max_connections})")
    parser.add_argument("--log", help="append a JSONL transition log here")


def serve_from_args(args: argparse.Namespace) -> int:
    server_limits = ServerLimits(
        max_bytes=args.max_bytes, reset_timeout=args.reset_timeout,
        step_timeout=args.step_timeout, max_atoms=args.max_atoms,
        max_memory=args.max_memory * (1 << 20) if args.max_memory is not None else None,
        max_clients=args.max_clients, idle_timeout=args.idle_timeout,
        reclaim_after=args.reclaim_after, max_connections=args.max_connections)
    return serve(args.port, args.bind, args.backend, server_limits=server_limits,
                 domains_dirs=getattr(args, "domains_dir", None) or None,
                 allow_paths=args.allow_paths, token_file=args.token_file, log=args.log,
                 placement=getattr(args, "placement", None))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m sage_pddl.env.thor.server`."""
    parser = argparse.ArgumentParser(prog="sage-pddl thor-server",
                                     description="Serve an environment backend over ZMQ.")
    add_arguments(parser)
    parser.add_argument("--domains-dir", action="append", default=[],
                        help="extra folder of domain files (repeatable)")
    args = parser.parse_args(argv)
    try:
        return serve_from_args(args)
    except SageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
