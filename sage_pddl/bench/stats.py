"""Statistics for benchmark results: task-level bootstrap CIs, paired permutation tests, Holm.

The unit of analysis is the TASK: a task's value for a (model, planner, metric) is the mean over
its seeds (rows with an error or without a value for the metric left out), so seeds never count
as independent tasks.

* `bootstrap_ci(values)`: percentile bootstrap of the mean over tasks (B = 10,000 by default).
* `paired_permutation_test(a, b)`: two-sided sign-flip test on paired per-task differences.
  Monte Carlo p = (1 + #{|perm mean| >= |observed mean|}) / (1 + B), so p > 0 always; when
  2**n <= B the 2**n sign patterns are enumerated instead and p is exact (the identity pattern
  is among them, so p >= 2**-n > 0 there too).
* `holm(pvalues)`: Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1).
* Every random procedure takes its own seed, derived from the NAME of what it estimates with
  `derived_seed(name)` (a SHA-256 of the name), never from a shared RNG stream: a CI or p-value
  does not change when other comparisons are added, removed or reordered.
"""
from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_LEVEL = 0.95
DEFAULT_ALPHA = 0.05
BASE_SEED = 20240917


def derived_seed(name: str, base: int = BASE_SEED) -> int:
    """A 64-bit seed that depends only on `name` (and `base`)."""
    digest = hashlib.sha256(f"{base}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Interval:
    """A mean over tasks with its bootstrap percentile interval."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def _values(values: Iterable[float]) -> np.ndarray:
    array = np.asarray([float(v) for v in values], dtype=float)
    if array.size and not np.all(np.isfinite(array)):
        raise ValueError("statistics need finite values (drop error rows and missing values first)")
    return array


def bootstrap_ci(values: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES,
                 level: float = DEFAULT_LEVEL, seed: int | str = 0) -> Interval:
    """Percentile bootstrap interval of the mean of `values` (one value per task)."""
    data = _values(values)
    if data.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(data.mean())
    if resamples <= 0 or np.all(data == data[0]):
        # every value the same (one task included): every resample is the data itself, so
        # each resampled mean is `mean`, bit for bit, and so are both percentiles
        return Interval(mean, mean, mean, int(data.size))
    rng = np.random.default_rng(derived_seed(seed) if isinstance(seed, str) else seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // data.size)  # bound memory: resample in chunks
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, data.size, size=(stop - start, data.size))
        means[start:stop] = data[picks].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Interval(mean, float(low), float(high), int(data.size))


def paired_permutation_test(a: Sequence[float], b: Sequence[float], *,
                            resamples: int = DEFAULT_RESAMPLES, seed: int | str = 0,
                            method: str = "auto") -> float:
    """Two-sided p-value of mean(a - b) == 0 under random sign flips of the paired differences.

    `method`: "exact" enumerates the 2**n sign patterns, "monte-carlo" draws `resamples` of them
    and applies the +1 correction, "auto" is exact when 2**n <= resamples.
    """
    x, y = _values(a), _values(b)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    if x.size == 0:
        return math.nan
    diffs = x - y
    observed = abs(diffs.mean())
    tolerance = 1e-12 * max(1.0, observed)  # equal means must count as "as extreme"
    if method not in ("auto", "exact", "monte-carlo"):
        raise ValueError(f"method must be auto, exact or monte-carlo, got {method!r}")
    exact = method == "exact" or (method == "auto" and 2 ** diffs.size <= resamples)
    if exact and diffs.size > 20:
        raise ValueError(f"exact enumeration of 2**{diffs.size} sign patterns is too large")
    if not np.any(diffs):  # no difference: every sign pattern is as extreme as the data
        return 1.0
    if exact:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=diffs.size)))
        extreme = np.abs(signs @ diffs / diffs.size) >= observed - tolerance
        return float(extreme.mean())
    rng = np.random.default_rng(derived_seed(seed) if isinstance(seed, str) else seed)
    count = 0
    chunk = max(1, 2_000_000 // diffs.size)
    for start in range(0, resamples, chunk):
        size = min(resamples, start + chunk) - start
        signs = rng.choice((-1.0, 1.0), size=(size, diffs.size))
        count += int(np.count_nonzero(np.abs(signs @ diffs / diffs.size) >= observed - tolerance))
    return (1 + count) / (1 + resamples)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given. NaN p-values stay NaN and do not
    count towards the family size."""
    indexed = [(p, i) for i, p in enumerate(pvalues) if not math.isnan(p)]
    m = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Comparison:
    """Candidate vs baseline on one metric, paired on the tasks both have a value for."""

    name: str
    metric: str
    model: str
    candidate: str
    baseline: str
    n_tasks: int
    candidate_mean: float
    baseline_mean: float
    diff: Interval
    p: float
    p_holm: float = math.nan
    significant: bool = False


def compare(name: str, metric: str, model: str, candidate: str, baseline: str,
            candidate_values: Mapping[object, float], baseline_values: Mapping[object, float], *,
            resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL) -> Comparison:
    """Paired comparison on the common task keys; seeds derive from `name` (see module doc)."""
    common = sorted(set(candidate_values) & set(baseline_values), key=str)
    a = [candidate_values[k] for k in common]
    b = [baseline_values[k] for k in common]
    diffs = [x - y for x, y in zip(a, b)]
    interval = bootstrap_ci(diffs, resamples=resamples, level=level, seed=f"{name}/ci")
    p = paired_permutation_test(a, b, resamples=resamples, seed=f"{name}/perm")
    return Comparison(name=name, metric=metric, model=model, candidate=candidate,
                      baseline=baseline, n_tasks=len(common),
                      candidate_mean=float(np.mean(a)) if a else math.nan,
                      baseline_mean=float(np.mean(b)) if b else math.nan,
                      diff=interval, p=p)


def adjust_family(comparisons: Sequence[Comparison], alpha: float = DEFAULT_ALPHA
                  ) -> list[Comparison]:
    """Holm-adjust one family of comparisons and mark those significant at `alpha`."""
    adjusted = holm([c.p for c in comparisons])
    return [replace(c, p_holm=q, significant=bool(not math.isnan(q) and q < alpha))
            for c, q in zip(comparisons, adjusted)]
