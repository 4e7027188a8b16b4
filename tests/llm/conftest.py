"""Fixtures for the LLM backend tests: a fake Ollama server and a port where nothing listens."""
from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from .fake_ollama import FakeOllama


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    with FakeOllama(models=["tiny:latest", "other:7b"]) as server:
        yield server


@pytest.fixture
def closed_port_host() -> str:
    """A loopback URL whose port the OS just handed out and that nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class SleepRecorder:
    """Stands in for time.sleep so back-off is asserted, not waited for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()
