"""Where the cells of a benchmark grid run: in the calling thread, on a pool of threads, or as
Ray tasks on a cluster.

An executor takes cells with `submit(cell)` and hands finished ones back with `next_done()` as
`(cell, row)`, in the order they finish. It never writes a file: the runner that drives it is
the single writer of `results.jsonl`, so every row is written whole, once, by one thread, in
whatever order cells finish. A cell's row depends on the cell alone (its seed is the cell's), so
the rows do not depend on the executor or on how many cells run at once.

What runs a cell is a *runner*, `Callable[[Cell], row]`, made by a `RunnerFactory`. Each thread
of `ThreadExecutor` and each Ray worker process makes its own runner once; whatever the factory
shares between the runners of a process on purpose (the LLM backends, so a `HostPool` limits
requests across threads; the runner's memories and planning tasks, built once) must be
thread-safe.

* `InlineExecutor`: one cell at a time in the calling thread (`--workers 1`, the default).
* `ThreadExecutor(n)`: up to n cells at once on n threads. Cells wait on LLM servers, so threads
  overlap the waiting; the CPU work of gating and scoring still shares one interpreter.
* `RayExecutor(n, address)`: up to n cells at once as Ray tasks (extra `ray`). It joins the
  cluster at `address`, or starts a local Ray instance without one. Each task asks for
  CPUs/n of a CPU (at most one), so n cells run at once even beyond the cluster's CPUs. The
  runner factory is shipped to the workers once (`ray.put`) and called once per worker
  process.
"""
from __future__ import annotations

import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, Protocol

from sage_pddl.tasks import Task


class Cell(NamedTuple):
    """One (model, planner, task, seed) of the grid."""

    model: str
    planner: str
    task: Task
    seed: int


Row = dict[str, Any]
Runner = Callable[[Cell], Row]
RunnerFactory = Callable[[], Runner]


class Executor(Protocol):
    """Runs submitted cells and returns them as they finish (see the module docstring)."""

    capacity: int
    """How many cells may be in flight at once."""

    def submit(self, cell: Cell) -> None: ...

    def next_done(self) -> tuple[Cell, Row]:
        """The next finished cell and its row (blocks); an error raised by a runner outside a
        row (a broken setup) is raised here."""
        ...

    @property
    def in_flight(self) -> int: ...

    def close(self) -> None:
        """Drop cells not started; do not wait for running ones."""
        ...


class InlineExecutor:
    """One cell at a time, run by `next_done` in the calling thread."""

    capacity = 1

    def __init__(self, make_runner: RunnerFactory):
        self._make_runner = make_runner
        self._runner: Runner | None = None
        self._queue: deque[Cell] = deque()

    def submit(self, cell: Cell) -> None:
        self._queue.append(cell)

    def next_done(self) -> tuple[Cell, Row]:
        if self._runner is None:
            self._runner = self._make_runner()
        cell = self._queue.popleft()
        return cell, self._runner(cell)

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def close(self) -> None:
        self._queue.clear()


class ThreadExecutor:
    """Up to `workers` cells at once, each thread with its own runner.

    The threads are daemons: after Ctrl-C the process exits without waiting for the cells in
    flight (their rows were not written, so a resume runs them again)."""

    def __init__(self, workers: int, make_runner: RunnerFactory):
        self.capacity = int(workers)
        self._make_runner = make_runner
        self._todo: queue.SimpleQueue[Cell | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[Cell, Row | None, BaseException | None]] = \
            queue.SimpleQueue()
        self._in_flight = 0
        for number in range(self.capacity):
            threading.Thread(target=self._work, daemon=True,
                             name=f"bench-cell-{number}").start()

    def _work(self) -> None:
        runner: Runner | None = None
        while (cell := self._todo.get()) is not None:
            try:
                if runner is None:
                    runner = self._make_runner()
                self._done.put((cell, runner(cell), None))
            except BaseException as error:  # handed to the runner's thread, raised there
                self._done.put((cell, None, error))

    def submit(self, cell: Cell) -> None:
        self._in_flight += 1
        self._todo.put(cell)

    def next_done(self) -> tuple[Cell, Row]:
        cell, row, error = self._done.get()
        self._in_flight -= 1
        if error is not None:
            raise error
        assert row is not None
        return cell, row

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def close(self) -> None:
        for _ in range(self.capacity):
            self._todo.put(None)


# ----------------------------------------------------------------------------------------- Ray
_WORKER_RUNNERS: dict[Hashable, Runner] = {}
"""A Ray worker process's runners by the key of their run (`RayExecutor`'s `key`), under
`_WORKER_LOCK`: one per run that sent this worker a cell."""
_WORKER_LOCK = threading.Lock()


def _run_on_worker(key: Hashable, make_runner: RunnerFactory, cell: Cell) -> Row:
    """A Ray task: the cell's row, from this worker process's runner (made on first use)."""
    with _WORKER_LOCK:
        runner = _WORKER_RUNNERS.get(key)
        if runner is None:
            runner = _WORKER_RUNNERS[key] = make_runner()
    return runner(cell)


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be joined (the message says which)."""


class RayExecutor:
    """Up to `workers` cells at once as Ray tasks (see the module docstring)."""

    def __init__(self, workers: int | None, make_runner: RunnerFactory, key: Hashable,
                 address: str | None = None):
        try:
            import ray  # optional extra: imported only when this executor is chosen
        except ImportError:
            raise RayUnavailable("the ray executor needs the Python package 'ray', which is not "
                                 "installed; install it with: pip install 'sage-pddl[ray]'"
                                 ) from None
        self._ray = ray
        if not ray.is_initialized():
            # ray.init puts its own SIGTERM handler (exit 15) in place of the caller's, which
            # `sage-pddl bench` sets to stop a run like Ctrl-C; keep the caller's
            main = threading.current_thread() is threading.main_thread()
            on_sigterm = signal.getsignal(signal.SIGTERM) if main else None
            try:
                if address:
                    ray.init(address=address, log_to_driver=False)
                else:
                    ray.init(include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise RayUnavailable(f"cannot start or join {where}: {error}") from None
            finally:
                if on_sigterm is not None:
                    signal.signal(signal.SIGTERM, on_sigterm)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.capacity = int(workers) if workers else cpus
        self._factory_ref = ray.put(make_runner)
        self._key = key
        # A cell mostly waits for its LLM server, so `workers` may exceed the cluster's CPUs:
        # each task asks for its share of them (Ray counts resources in 1/10000ths), or Ray
        # would run no more cells at once than there are CPUs.
        share = max(0.0001, round(min(1.0, cpus / self.capacity), 4))
        self._task = ray.remote(num_cpus=share, max_retries=0)(_run_on_worker)
        self._running: dict[Any, Cell] = {}

    def submit(self, cell: Cell) -> None:
        self._running[self._task.remote(self._key, self._factory_ref, cell)] = cell

    def next_done(self) -> tuple[Cell, Row]:
        ready, _ = self._ray.wait(list(self._running), num_returns=1)
        cell = self._running.pop(ready[0])
        return cell, self._ray.get(ready[0])

    @property
    def in_flight(self) -> int:
        return len(self._running)

    def close(self) -> None:
        for ref in self._running:
            self._ray.cancel(ref, force=True)
        self._running.clear()
