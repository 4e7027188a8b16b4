"""HTTP for the LLM backends: every call has a total deadline and a bounded answer.

httpx's timeouts bound each network operation, not a call: a server that sends one byte a
second never trips a read timeout, and a body is read whole however long it is. The ollama
and openai backends' clients (both packages are httpx clients) send through
`BoundedTransport`, which adds to every request:

* a deadline of `seconds` from the request's start, for the whole exchange (connect, headers,
  body): at the deadline the request's connection is shut down (its socket comes from
  httpcore's documented `trace` extension, and every request opens its own connection so
  there always is one), which ends any read under way, and the call raises `LLMTimeout`;
* a limit of `MAX_ANSWER_BYTES` on the body as it arrives (streamed or not): past it the read
  stops and the call raises `AnswerTooLarge`.

Both are `LLMError`s, so to a planner such a call is a failed call (a failed plan), never a
hang or a crash. openai 3 and later are built on `httpx2` (the same API under another
name): `BoundedTransport` is made for the package a client class is built on
(`http_library`).
"""
from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

import httpx

from .base import LLMError, LLMTimeout

MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The largest HTTP body read from an LLM server (an answer a planner reads is at most
200,000 characters; a JSON reply wraps it with a little metadata)."""


class AnswerTooLarge(LLMError):
    """The server's answer is longer than `MAX_ANSWER_BYTES`."""


class _Deadline:
    """Shuts down the connections a request opened when its time is up."""

    def __init__(self, seconds: float, where: str):
        self.seconds = seconds
        self.where = where
        self.ends = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's `trace` callback: keeps the socket of each connection opened."""
        if event == "connection.connect_tcp.complete" and info.get("return_value") is not None:
            opened = info["return_value"].get_extra_info("socket")
            if opened is not None:
                self._sockets.append(opened)
                if self.passed():  # opened just as the time ran out
                    self._expire()

    def _expire(self) -> None:
        for opened in self._sockets:
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
        self._timer.cancel()


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
    certificates, tens of milliseconds each time), made once per process: one context serves
    any number of connections."""
    create = getattr(library, "create_ssl_context", None)
    return create() if callable(create) else True


@cache
def _body_type(stream_type: type) -> type:
    return type("BoundedBody", (_BoundedBody, stream_type), {})


class BoundedTransport:
    """The library's HTTP transport with a total deadline per request and a bounded answer
    (see the module docstring). `seconds` is the deadline; `where` names the server in
    errors; `library` is httpx or httpx2 (`http_library`)."""

    def __init__(self, seconds: float, where: str, library: ModuleType = httpx):
        self.seconds = seconds
        self.where = where
        self.library = library
        # a connection per request: the deadline shuts down the one its request opened
        self.inner = library.HTTPTransport(verify=_default_ssl_context(library),
                                           limits=library.Limits(max_keepalive_connections=0))

    def handle_request(self, request: Any) -> Any:
        deadline = _Deadline(self.seconds, self.where)
        earlier = request.extensions.get("trace")

        def trace(event: str, info: dict[str, Any]) -> None:
            deadline.trace(event, info)
            if earlier is not None:
                earlier(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        try:
            response = self.inner.handle_request(request)
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
        self.inner.close()

    def __enter__(self) -> BoundedTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
