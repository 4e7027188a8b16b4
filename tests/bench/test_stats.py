"""Statistics on small arrays with known answers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sage_pddl.bench import stats


def test_bootstrap_of_a_constant_is_the_constant():
    interval = stats.bootstrap_ci([0.5] * 7, resamples=2000, seed="c")
    assert (interval.mean, interval.low, interval.high, interval.n) == (0.5, 0.5, 0.5, 7)
    assert interval.half_width == 0.0


@pytest.mark.parametrize("n", [1, 3, 7, 16, 45])
@pytest.mark.parametrize("value", [0.0, 1.0, 0.1, 1 / 3, 0.7, 123.456])
def test_a_constant_is_not_resampled_and_gives_what_resampling_gives(n, value):
    """Equal values skip the resampling; the interval is bit for bit the one resampling gives
    (a mean of n copies of 0.1 is not 0.1, and resampled means round the same way)."""
    data = np.full(n, value)
    picks = np.random.default_rng(0).integers(0, n, size=(500, n))
    low, high = np.percentile(data[picks].mean(axis=1), [2.5, 97.5])
    interval = stats.bootstrap_ci([value] * n, resamples=500, seed="c")
    assert (interval.mean, interval.low, interval.high) == (float(data.mean()), low, high)


def test_bootstrap_interval_covers_the_mean_and_is_reproducible_by_name():
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    a = stats.bootstrap_ci(values, resamples=3000, seed="SAGE/goal")
    b = stats.bootstrap_ci(values, resamples=3000, seed="SAGE/goal")
    assert a == b
    assert a.mean == pytest.approx(0.625) and a.low < a.mean < a.high
    assert 0.0 <= a.low and a.high <= 1.0
    assert stats.bootstrap_ci([], resamples=10).n == 0
    assert math.isnan(stats.bootstrap_ci([], resamples=10).mean)


def test_seeds_derive_from_names_not_a_shared_stream():
    assert stats.derived_seed("x") == stats.derived_seed("x")
    assert stats.derived_seed("x") != stats.derived_seed("y")
    # computing another CI first does not change this one
    first = stats.bootstrap_ci([0, 1, 1, 0, 1], resamples=500, seed="one")
    stats.bootstrap_ci([3, 4, 5], resamples=500, seed="two")
    assert stats.bootstrap_ci([0, 1, 1, 0, 1], resamples=500, seed="one") == first


@pytest.mark.parametrize("method", ["exact", "monte-carlo"])
def test_identical_samples_give_p_one(method):
    a = [0.2, 0.9, 0.4, 1.0, 0.0, 0.7]
    assert stats.paired_permutation_test(a, a, resamples=999, seed="s", method=method) == 1.0


def test_plus_one_correction_keeps_p_above_zero():
    a, b = np.ones(40), np.zeros(40)  # every sign flip is less extreme than the observed
    p = stats.paired_permutation_test(a, b, resamples=999, seed="s", method="monte-carlo")
    assert p == pytest.approx(1 / 1000)


def test_exact_enumeration_known_answer():
    # three equal positive differences: only all-plus and all-minus are as extreme -> 2/8
    assert stats.paired_permutation_test([1, 1, 1], [0, 0, 0], method="exact") == 0.25
    # auto is exact when 2**n <= resamples
    assert stats.paired_permutation_test([1, 1, 1], [0, 0, 0], resamples=8) == 0.25
    with pytest.raises(ValueError):
        stats.paired_permutation_test([1, 2], [1], method="exact")


def test_monte_carlo_agrees_with_exact():
    rng = np.random.default_rng(0)
    a, b = rng.random(10), rng.random(10)
    exact = stats.paired_permutation_test(a, b, method="exact")
    approx = stats.paired_permutation_test(a, b, resamples=20_000, seed="mc",
                                           method="monte-carlo")
    assert approx == pytest.approx(exact, abs=0.02)


def test_holm_known_values_order_and_monotonicity():
    adjusted = stats.holm([0.01, 0.04, 0.03])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06])
    ps = [0.2, 0.001, 0.04, 0.5, 0.012]
    adj = stats.holm(ps)
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adj[order[i]] <= adj[order[i + 1]] for i in range(len(ps) - 1))
    assert all(q >= p for p, q in zip(ps, adj)) and max(adj) <= 1.0
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]
    nan_case = stats.holm([0.01, math.nan, 0.02])
    assert nan_case[0] == pytest.approx(0.02) and math.isnan(nan_case[1])


def test_compare_and_family_adjustment():
    cand = {"t1": 1.0, "t2": 1.0, "t3": 1.0, "t4": 0.0, "extra": 1.0}
    base = {"t1": 0.0, "t2": 0.0, "t3": 0.0, "t4": 0.0}
    c = stats.compare("m/SAGE/vs/Direct", "goal", "m", "SAGE", "Direct", cand, base,
                      resamples=2000)
    assert c.n_tasks == 4  # paired on common tasks only
    assert c.diff.mean == pytest.approx(0.75) and c.p == pytest.approx(4 / 16)
    same = stats.compare("m/SAGE/vs/CoT", "goal", "m", "SAGE", "CoT", base, base, resamples=2000)
    family = stats.adjust_family([c, same], alpha=0.6)
    assert family[0].p_holm == pytest.approx(0.5) and family[0].significant
    assert family[1].p_holm == 1.0 and not family[1].significant
