"""HTTP for the LLM backends: every call has a total deadline and a bounded answer.

httpx's timeouts bound each network operation, not a call: a server that sends one byte a
second never trips a read timeout, and a body is read whole however long it is. The ollama
and openai backends' clients (both packages are httpx clients) send through
`BoundedTransport`, which adds to every request:

* a deadline of `seconds` (or of the request's own read timeout, when shorter) from the
  request's start, for the whole exchange (connect, headers, body): at the deadline the
  request's connection is shut down, which ends any read under way, and the call raises
  `LLMTimeout`. One thread of the process (`_Watchdog`) keeps the deadlines of the requests
  under way and shuts the connections down; no request starts a thread of its own;
* a limit of `MAX_ANSWER_BYTES` on the body as it arrives (streamed or not), counted after
  any content encoding is undone: past it the read stops and the call raises `AnswerTooLarge`.
  A request asks for the body as it is (`Accept-Encoding: identity`, where the libraries
  offer gzip and deflate by default and would undo them whole, past any limit on the bytes
  received). A server that compresses all the same has its gzip or deflate body undone here,
  a piece at a time, never past the limit (zlib's `max_length`), and handed to the library
  without its `Content-Encoding`; any other encoding fails the call (`LLMServerError`).

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
import zlib
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

import httpx

from .errors import LLMError, LLMServerError, LLMTimeout

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


_ZLIB_WINDOWS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
                 "deflate": zlib.MAX_WBITS}
"""zlib's `wbits` per content encoding the transport undoes itself: gzip's header; for
"deflate", zlib's header, or none (HTTP's other reading of that name: raw deflate) when the
first byte is no zlib header (`_Inflater`)."""


class _Inflater:
    """A gzip or deflate body undone a piece at a time, never more than `room` bytes out of one
    piece (zlib's `max_length`), so a small compressed body cannot grow past the limit in
    memory. Bytes after the end of the compressed stream are ignored."""

    def __init__(self, encoding: str):
        self.encoding = encoding
        self.inflater: Any = None

    def inflate(self, piece: bytes, room: int) -> bytes:
        """The bytes `piece` undoes to, at most `room + 1` of them (one past the limit tells
        the caller it is passed); `zlib.error` for a broken encoding."""
        if not piece:
            return b""
        if self.inflater is None:
            wbits = _ZLIB_WINDOWS[self.encoding]
            if self.encoding == "deflate" and piece and (piece[0] & 0x0F) != 8:
                wbits = -zlib.MAX_WBITS  # raw deflate: no zlib header
            self.inflater = zlib.decompressobj(wbits)
        if self.inflater.eof:
            return b""
        return bytes(self.inflater.decompress(piece, room + 1))


class _BoundedBody:
    """A response body read within the request's deadline and `MAX_ANSWER_BYTES` (mixed into
    the library's `SyncByteStream`, which its client checks for: `_body_type`); undone here if
    the server encoded it (`inflater`)."""

    def __init__(self, inner: Any, deadline: _Deadline, library: ModuleType,
                 inflater: _Inflater | None = None):
        self.inner = inner
        self.deadline = deadline
        self.library = library
        self.inflater = inflater

    def _too_large(self) -> AnswerTooLarge:
        return AnswerTooLarge(f"{self.deadline.where} sent an answer of more than "
                              f"{MAX_ANSWER_BYTES:,} bytes; sage-pddl reads at most that")

    def __iter__(self) -> Iterator[bytes]:
        received = decoded = 0
        try:
            for chunk in self.inner:
                received += len(chunk)
                if received > MAX_ANSWER_BYTES:
                    raise self._too_large()
                if self.deadline.passed():
                    raise self.deadline.error()
                if self.inflater is not None:
                    try:
                        chunk = self.inflater.inflate(chunk, MAX_ANSWER_BYTES - decoded)
                    except zlib.error as error:
                        raise LLMServerError(f"{self.deadline.where} sent a broken "
                                             f"{self.inflater.encoding} answer: {error}") from None
                    decoded += len(chunk)
                    if decoded > MAX_ANSWER_BYTES:
                        raise self._too_large()
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


def _inflater_for(headers: Any) -> _Inflater | None:
    """What undoes a response's `Content-Encoding` (None: the body is as sent), its header
    removed (with the length of the encoded body), so the library does not undo it whole."""
    encodings = [part.strip().lower() for part in headers.get("content-encoding", "").split(",")
                 if part.strip() and part.strip().lower() != "identity"]
    for name in ("content-encoding", "content-length"):
        if encodings and name in headers:
            del headers[name]
    if not encodings:
        return None
    if len(encodings) == 1 and encodings[0] in _ZLIB_WINDOWS:
        return _Inflater(encodings[0])
    raise LLMServerError(f"sent an answer encoded as {', '.join(encodings)!r}, which was not "
                         "asked for (sage-pddl asks for Accept-Encoding: identity)")


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

    def _seconds_for(self, request: Any) -> float:
        """The request's deadline: `seconds`, or the read timeout the request was sent with
        when that is shorter (httpx's documented `timeout` extension: a client's
        `with_options(timeout=...)` for one request, such as a server check)."""
        read = (request.extensions.get("timeout") or {}).get("read")
        if isinstance(read, (int, float)) and 0 < read < self.seconds:
            return float(read)
        return self.seconds

    def handle_request(self, request: Any) -> Any:
        transport, kept = self._own()
        deadline = _Deadline(self._seconds_for(request), self.where, kept.opened)
        earlier = request.extensions.get("trace")

        def trace(event: str, info: dict[str, Any]) -> None:
            opened = deadline.trace(event, info)
            if opened is not None:
                kept.opened = opened
            if earlier is not None:
                earlier(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        request.headers["Accept-Encoding"] = "identity"
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
        try:
            inflater = _inflater_for(response.headers)
        except LLMServerError as error:
            response.close()
            raise LLMServerError(f"{self.where} {error}") from None
        response.stream = _body_type(self.library.SyncByteStream)(
            response.stream, deadline, self.library, inflater)
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
