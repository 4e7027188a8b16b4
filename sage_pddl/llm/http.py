"""HTTP for the LLM backends: every call has a total deadline and a bounded answer.

httpx's timeouts bound each network operation, not a call: a server that sends one byte a
second never trips a read timeout, and a body is read whole however long it is. The ollama
and openai backends' clients (both packages are httpx clients) send through
`BoundedTransport`, which adds to every request:

* a deadline of `seconds` from the request's start, for the whole exchange (connect, headers,
  body): at the deadline the request's connection is shut down, which ends any read under way,
  and the call raises `LLMTimeout`. One thread of the process (`_Watchdog`) keeps the
  deadlines of the requests under way and shuts the connections down; no request starts a
  thread of its own;
* a limit of `MAX_ANSWER_BYTES` on the body as it arrives (streamed or not): past it the read
  stops and the call raises `AnswerTooLarge`.

Both are `LLMError`s, so to a planner such a call is a failed call (a failed plan), never a
hang or a crash.

Connections are kept alive and reused, one per thread that calls (a transport of the library,
limited to one connection, per thread): a benchmark's worker threads each keep theirs open
from call to call. The deadline knows the connection's socket from httpcore's documented
`trace` extension, which reports a connection when it is opened: a thread's request runs on the
one connection its thread last opened. (So a thread must read or close a response before it
sends the next request, as the ollama and openai clients do without streaming.)

openai 3 and later are built on `httpx2` (the same API under another name): `BoundedTransport`
is made for the package a client class is built on (`http_library`).
"""
from __future__ import annotations

import heapq
import itertools
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

import httpx

from .errors import LLMError, LLMTimeout

MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The largest HTTP body read from an LLM server (an answer a planner reads is at most
200,000 characters; a JSON reply wraps it with a little metadata)."""


class AnswerTooLarge(LLMError):
    """The server's answer is longer than `MAX_ANSWER_BYTES`."""


class _Deadline:
    """When a request's time is up, and the socket of the connection it runs on."""

    def __init__(self, seconds: float, where: str, opened: socket.socket | None):
        self.seconds = seconds
        self.where = where
        self.ends = time.monotonic() + seconds
        self.socket = opened
        """The connection's socket: the one its thread opened last, until the request opens
        another (`trace`)."""
        self.cancelled = False

    def trace(self, event: str, info: dict[str, Any]) -> socket.socket | None:
        """httpcore's `trace` callback: the socket of a connection the request opened, kept
        (and returned; None for any other event)."""
        if event == "connection.connect_tcp.complete" and info.get("return_value") is not None:
            opened = info["return_value"].get_extra_info("socket")
            if opened is not None:
                self.socket = opened
                if self.passed():  # opened just as the time ran out
                    self.expire()
                return opened
        return None

    def expire(self) -> None:
        opened = self.socket  # read once: `cancel` may drop it meanwhile
        if opened is not None and not self.cancelled:
            try:
                opened.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def passed(self) -> bool:
        return time.monotonic() >= self.ends

    def error(self) -> LLMTimeout:
        return LLMTimeout(f"{self.where} did not finish its answer within {self.seconds:g} s "
                          "(the whole call, not one read); raise the timeout or use a "
                          "smaller model")

    def cancel(self) -> None:
        self.cancelled = True
        self.socket = None  # the watchdog may keep the deadline until its time


class _Watchdog:
    """The process's one thread that expires the deadlines of requests under way, soonest
    first. A cancelled deadline is dropped when it comes first, so the heap holds at most the
    requests made within one timeout; the thread wakes when a deadline is due or one sooner
    than all others is added (a forked child starts its own thread)."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, _Deadline]] = []
        self._numbers = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: _Deadline) -> None:
        with self._changed:
            soonest = not self._due or deadline.ends < self._due[0][0]
            heapq.heappush(self._due, (deadline.ends, next(self._numbers), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="sage-pddl-http-deadlines")
                self._thread.start()
            elif soonest:
                self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                while self._due and (self._due[0][2].cancelled or self._due[0][0] <= now):
                    heapq.heappop(self._due)[2].expire()  # a cancelled one does nothing
                self._changed.wait(self._due[0][0] - now if self._due else None)


_WATCHDOG = _Watchdog()


def _new_watchdog() -> None:
    """A forked child's own watchdog: the parent's thread and heap are not the child's."""
    global _WATCHDOG
    _WATCHDOG = _Watchdog()


os.register_at_fork(after_in_child=_new_watchdog)


def http_library(client_class: type) -> ModuleType:
    """The httpx-compatible package `client_class` (an httpx `Client` or a subclass) is
    built on: httpx, or httpx2."""
    for base in client_class.__mro__:
        if base.__name__ == "Client" and base.__module__.partition(".")[0] in ("httpx", "httpx2"):
            return sys.modules[base.__module__.partition(".")[0]]
    return httpx


class _BoundedBody:
    """A response body read within the request's deadline and `MAX_ANSWER_BYTES` (mixed into
    the library's `SyncByteStream`, which its client checks for: `_body_type`)."""

    def __init__(self, inner: Any, deadline: _Deadline, library: ModuleType):
        self.inner = inner
        self.deadline = deadline
        self.library = library

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        try:
            for chunk in self.inner:
                received += len(chunk)
                if received > MAX_ANSWER_BYTES:
                    raise AnswerTooLarge(f"{self.deadline.where} sent an answer of more than "
                                         f"{MAX_ANSWER_BYTES:,} bytes; sage-pddl reads at most "
                                         "that")
                if self.deadline.passed():
                    raise self.deadline.error()
                yield chunk
            self.deadline.cancel()  # read whole: its connection may serve the next request
        except self.library.TransportError as error:
            if self.deadline.passed():
                raise self.deadline.error() from error
            raise

    def close(self) -> None:
        self.deadline.cancel()
        self.inner.close()


@cache
def _default_ssl_context(library: ModuleType) -> Any:
    """The SSL context the library's transport makes by default (reading the system's
    certificates each time it is made), made once per library and process: one context
    serves any number of connections."""
    create = getattr(library, "create_ssl_context", None)
    return create() if callable(create) else True


@cache
def _body_type(stream_type: type) -> type:
    """`_BoundedBody` made a subclass of a library's stream type, once per stream type (one per
    HTTP library the process uses)."""
    return type("BoundedBody", (_BoundedBody, stream_type), {})


_NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
"""A request's headers and body leave at once, not held back until the server acknowledges the
headers (Nagle's algorithm, which on a kept-alive connection meets the server's delayed
acknowledgement and stalls every request until the server's timer fires)."""


class BoundedTransport:
    """The library's HTTP transport with a total deadline per request, a bounded answer and a
    kept-alive connection per thread (see the module docstring). `seconds` is the deadline;
    `where` names the server in errors; `library` is httpx or httpx2 (`http_library`)."""

    def __init__(self, seconds: float, where: str, library: ModuleType = httpx):
        self.seconds = seconds
        self.where = where
        self.library = library
        self._local = threading.local()
        self._lock = threading.Lock()
        self._per_thread: dict[threading.Thread, Any] = {}  # thread -> its transport

    def _own(self) -> tuple[Any, Any]:
        """This thread's transport (made on its first request in this process; those of
        threads that ended are closed meanwhile) and what the thread keeps of it (`opened`:
        the socket of its connection)."""
        mine = getattr(self._local, "transport", None)
        if mine is None or self._local.pid != os.getpid():  # a forked child shares no socket
            self._local.pid = os.getpid()
            mine = self._local.transport = self.library.HTTPTransport(
                verify=_default_ssl_context(self.library),
                limits=self.library.Limits(max_connections=1, max_keepalive_connections=1),
                socket_options=_NO_DELAY)
            self._local.opened = None
            with self._lock:
                for thread in [t for t in self._per_thread if not t.is_alive()]:
                    self._per_thread.pop(thread).close()
                self._per_thread[threading.current_thread()] = mine
        return mine, self._local

    def handle_request(self, request: Any) -> Any:
        transport, kept = self._own()
        deadline = _Deadline(self.seconds, self.where, kept.opened)
        earlier = request.extensions.get("trace")

        def trace(event: str, info: dict[str, Any]) -> None:
            opened = deadline.trace(event, info)
            if opened is not None:
                kept.opened = opened
            if earlier is not None:
                earlier(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        _WATCHDOG.watch(deadline)
        try:
            response = transport.handle_request(request)
        except self.library.TransportError as error:
            deadline.cancel()
            if deadline.passed():
                raise deadline.error() from error
            raise
        except BaseException:
            deadline.cancel()
            raise
        response.stream = _body_type(self.library.SyncByteStream)(
            response.stream, deadline, self.library)
        return response

    def close(self) -> None:
        with self._lock:
            for transport in self._per_thread.values():
                transport.close()
            self._per_thread.clear()

    def __enter__(self) -> BoundedTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
