"""Several LLM servers behind one backend: requests spread over hosts, failing hosts set aside.

`HostPool(backends, per_host=K)` takes one backend per host (all serving the same model) and is
itself an `LLMBackend`. A `complete` call goes to the live host with the fewest requests in
flight (the first listed on a tie) and waits while every live host already has `per_host`
requests in flight, so no server gets more than K at once however many threads call.

A host fails a request when its backend raises an infrastructure error (`HOST_FAILURES`: not
reachable, timed out, 5xx, model missing). The backend has already retried with its own back-off
by then, so the pool moves the request to the next live host it has not tried, and counts the
failure. After `max_failures` failed requests in a row a host is set aside for the rest of the
pool's life and its requests go to the others; one answered request resets the count
(`timeout_sets_aside=True`: a host that times out once is set aside at once, as a command that
plans one task wants: a server too slow for one call is too slow for the next). When
every host has failed the request, or every host is set aside, the last error is raised (an
`LLMUnavailable` naming the hosts when none is left). A model's unusable answer
(`InvalidOutput`) says nothing about the host and is raised as it is.

Each `Completion` carries the `host` that answered it, so a benchmark row can say which
server produced it.
"""
from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from .base import DEFAULT_TEMPERATURE, Completion, LLMBackend, Messages
from .errors import (
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
)
from .output import Schema

HOST_FAILURES = (LLMUnavailable, LLMTimeout, LLMServerError, ModelNotFound)
"""Errors that mean "this server cannot answer", as opposed to "the model answered badly"."""


def address_problem(host: str) -> str | None:
    """Why `host` is not an LLM server's address (`HOST[:PORT][/PATH]`, `:PORT` on this machine,
    or an `http://` or `https://` URL), in words, or None when it is one."""
    text = host.strip()
    url = text if "://" in text else "http://" + ("localhost" + text if text.startswith(":")
                                                  else text)
    try:
        split = urlsplit(url)
        split.port  # noqa: B018  (a malformed or out-of-range port raises ValueError)
    except ValueError as error:
        return str(error)
    if split.scheme.lower() not in ("http", "https"):
        return f"the scheme {split.scheme}:// is not http:// or https://"
    if not split.hostname:
        return "it names no host"
    return None


def not_an_address(host: str, why: str) -> str:
    """The sentence that says `host` is no LLM server's address, because `why`."""
    return f"{host!r} is not a server address ({why}); give http://HOST:PORT"


def split_hosts(text: str | None) -> list[str]:
    """The hosts of a comma-separated `--llm-host` value, in order, without repeats or blanks."""
    return list(dict.fromkeys(part.strip() for part in (text or "").split(",") if part.strip()))


@dataclass
class _Host:
    name: str
    backend: LLMBackend
    in_flight: int = 0
    failures: int = 0
    set_aside: bool = False
    answered: int = 0


class HostPool:
    """One model served by several hosts (see the module docstring)."""

    name = "pool"

    def __init__(self, backends: Sequence[tuple[str, LLMBackend]], per_host: int = 4,
                 max_failures: int = 2, say: Callable[[str], None] | None = None,
                 timeout_sets_aside: bool = False):
        if not backends:
            raise LLMConfigError("a host pool needs at least one host")
        if int(per_host) < 1:
            raise LLMConfigError(f"per_host must be >= 1, got {per_host}")
        if int(max_failures) < 1:
            raise LLMConfigError(f"max_failures must be >= 1, got {max_failures}")
        self.hosts = [_Host(name, backend) for name, backend in backends]
        self.model = self.hosts[0].backend.model
        self.per_host = int(per_host)
        self.max_failures = int(max_failures)
        self.timeout_sets_aside = timeout_sets_aside
        self._say = say or (lambda text: print(text, file=sys.stderr))
        self._free = threading.Condition()

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        tried: set[str] = set()
        last_error: LLMError | None = None
        while True:
            host = self._acquire(tried, last_error)
            try:
                completion = host.backend.complete(messages, schema=schema,
                                                   temperature=temperature, seed=seed, role=role)
            except HOST_FAILURES as error:
                self._release(host, failed=True, error=error)
                tried.add(host.name)
                last_error = error
                continue
            except BaseException:
                self._release(host, failed=False)
                raise
            self._release(host, failed=False, answered=True)
            return dataclasses.replace(completion, host=host.name)

    def _acquire(self, tried: set[str], last_error: LLMError | None) -> _Host:
        """A live, untried host with a free slot (waits for one); raises when none is left."""
        with self._free:
            while True:
                candidates = [h for h in self.hosts if not h.set_aside and h.name not in tried]
                if not candidates:
                    if last_error is not None and any(not h.set_aside for h in self.hosts):
                        raise last_error
                    raise LLMUnavailable(
                        f"every LLM host of model {self.model!r} is set aside after repeated "
                        f"failures ({', '.join(h.name for h in self.hosts)})"
                        + (f"; last error: {last_error}" if last_error else ""))
                free = [h for h in candidates if h.in_flight < self.per_host]
                if free:
                    chosen = min(free, key=lambda h: h.in_flight)
                    chosen.in_flight += 1
                    return chosen
                self._free.wait()

    def _release(self, host: _Host, *, failed: bool, answered: bool = False,
                 error: BaseException | None = None) -> None:
        with self._free:
            host.in_flight -= 1
            if answered:
                host.failures = 0
                host.answered += 1
            elif failed:
                host.failures += 1
                gone = host.failures >= self.max_failures or (
                    self.timeout_sets_aside and isinstance(error, LLMTimeout))
                if gone and not host.set_aside:
                    host.set_aside = True
                    elsewhere = ("its requests go to the other hosts" if len(self.hosts) > 1
                                 else "no more requests go to it")
                    self._say(f"LLM host {host.name} set aside after {host.failures} failed "
                              f"requests in a row ({error}); {elsewhere}")
            self._free.notify_all()

    def check(self) -> None:
        """Fail early, as a server backend's `check()` does, when no host passes its own
        check (the first host's error is raised); hosts without a check pass."""
        failures: list[LLMError] = []
        for host in self.hosts:
            check = getattr(host.backend, "check", None)
            try:
                if callable(check):
                    check()
                return
            except LLMError as error:
                failures.append(error)
        raise failures[0]

    def live_hosts(self) -> list[str]:
        with self._free:
            return [h.name for h in self.hosts if not h.set_aside]

    def close(self) -> None:
        for host in self.hosts:
            close = getattr(host.backend, "close", None)
            if callable(close):
                close()

    def __repr__(self) -> str:
        return (f"HostPool(model={self.model!r}, hosts={[h.name for h in self.hosts]}, "
                f"per_host={self.per_host})")
