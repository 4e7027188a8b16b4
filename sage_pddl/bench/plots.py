"""The report's plots, drawn with matplotlib (the `bench` extra), as PNG files or SVG text.

Each function takes what the report computed (summary records of `report.summarize`, or the
run's rows) and returns a matplotlib `Figure`, or None when the run has nothing to draw:

* `success_figure`: the primary metric per planner and model with its bootstrap CI;
* `cost_figure`: LLM calls and tokens per task against success, one point per planner and
  model (means over tasks, success with its CI);
* `violations_figure`: the gate's violation codes per planner (counts over the plans scored);
* `recovery_figure`: what happened after an injected failure, per planner (exec mode).

`missing()` says why plots cannot be drawn (matplotlib absent), else None. `svg(figure)` is the
figure as SVG text with its words kept as text, for a page to inline. `load()` imports
matplotlib with the figures' settings ahead of drawing: a command that draws after a long wait
(a benchmark's cells waiting on LLM calls) runs it on a thread during that wait.
"""
from __future__ import annotations

import io
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sage_pddl.pddl.limits import printable

from . import metrics as metric_defs

PALETTE = ("#3465a4", "#f57900", "#4e9a06", "#75507b", "#c4a000", "#cc0000", "#06989a",
           "#8f5902", "#555753", "#ad7fa8", "#729fcf", "#e9b96e", "#8ae234")
MARKERS = ("o", "s", "^", "D", "v", "P")
TOP_CODES = 14
"""Violation codes shown at most (the most frequent)."""


def missing() -> str | None:
    """Why plots cannot be drawn here, or None."""
    try:
        import matplotlib  # optional extra 'bench'
    except ImportError:
        return "plots skipped: matplotlib is not installed (pip install 'sage-pddl[bench]')"
    matplotlib.use("Agg")
    return None


def load() -> None:
    """Import matplotlib's pyplot with the figures' settings now, so that drawing later does
    not pay for it; nothing when matplotlib is absent (`missing` says so when drawing)."""
    try:
        _pyplot()
    except ImportError:
        pass


def _pyplot() -> Any:
    import matplotlib  # optional extra 'bench'

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional extra 'bench'

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "sage-pddl",
                         "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "axes.titlesize": 10,
                         "axes.titleweight": "bold"})
    return plt


def _label(metric: str) -> str:
    return metric.replace("_", " ")


def _shown(names: Sequence[Any]) -> list[str]:
    """Names from the rows (planners, models, codes) as a figure may show them: a control
    character (an escape from a hostile row) written as its escape, which every font has."""
    return [printable(str(name)) for name in names]


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def success_figure(summary: Sequence[Mapping[str, Any]], mode: str, level: float) -> Any:
    """Grouped bars: the primary metric per planner, one bar per model, CI whiskers."""
    plt = _pyplot()
    metric = metric_defs.primary_metric(mode)
    models = list(dict.fromkeys(r["model"] for r in summary))
    planners = list(dict.fromkeys(r["planner"] for r in summary))
    width = 0.8 / max(1, len(models))
    figure, axis = plt.subplots(figsize=(max(4.0, min(8.6, 0.55 * len(planners) + 2)), 3.4))
    for index, model in enumerate(models):
        xs, ys, lows, highs = [], [], [], []
        for position, planner in enumerate(planners):
            record = next((r for r in summary if r["model"] == model and r["planner"] == planner),
                          None)
            if record is None or not _finite(record.get(metric)):
                continue
            xs.append(position + (index - (len(models) - 1) / 2) * width)
            ys.append(record[metric])
            lows.append(record[metric] - record[f"{metric}_low"])
            highs.append(record[f"{metric}_high"] - record[metric])
        axis.bar(xs, ys, width=width, yerr=[lows, highs], capsize=3, label=_shown([model])[0],
                 color=PALETTE[index % len(PALETTE)], error_kw={"elinewidth": 1})
    axis.set_xticks(range(len(planners)), _shown(planners), rotation=30, ha="right")
    axis.set_ylabel(_label(metric))
    axis.set_ylim(0, 1.05)
    axis.set_title(f"{_label(metric)} by planner ({level:.0%} bootstrap CI)")
    axis.grid(axis="y", alpha=0.3)
    if len(models) > 1:
        axis.legend(fontsize="small", title="model")
    figure.tight_layout()
    return figure


def cost_figure(summary: Sequence[Mapping[str, Any]], mode: str) -> Any:
    """Two panels, LLM calls and tokens per task (x) against success with its CI (y), one
    point per (planner, model): a colour per planner, a marker per model."""
    plt = _pyplot()
    metric = metric_defs.primary_metric(mode)
    points = [r for r in summary if _finite(r.get(metric)) and _finite(r.get("calls"))]
    if not points:
        return None
    models = list(dict.fromkeys(r["model"] for r in points))
    planners = list(dict.fromkeys(r["planner"] for r in points))
    figure, axes = plt.subplots(1, 2, figsize=(8.6, 3.4), sharey=True)
    for axis, cost, title in ((axes[0], "calls", "LLM calls per task"),
                              (axes[1], "total_tokens", "tokens per task")):
        for record in points:
            if not _finite(record.get(cost)):
                continue
            axis.errorbar([record[cost]], [record[metric]],
                          yerr=[[record[metric] - record[f"{metric}_low"]],
                                [record[f"{metric}_high"] - record[metric]]],
                          fmt=MARKERS[models.index(record["model"]) % len(MARKERS)], ms=6,
                          capsize=2, elinewidth=0.8, alpha=0.85,
                          color=PALETTE[planners.index(record["planner"]) % len(PALETTE)],
                          label=_shown([record["planner"] + (f" · {record['model']}"
                                                             if len(models) > 1 else "")])[0])
        axis.set_xlabel(title + " (mean)")
        axis.grid(alpha=0.3)
        axis.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel(_label(metric))
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    figure.suptitle(f"cost against {_label(metric)} (mean over tasks, CI on success)",
                    fontsize=10, fontweight="bold")
    figure.tight_layout()
    return figure


def violation_counts(rows: Sequence[Mapping[str, Any]], planners: Sequence[str]
                     ) -> dict[str, Counter[str]]:
    """planner -> violation code -> count, over the rows' scored plans (error rows left out)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        codes = row.get("violation_codes")
        if row.get("error") or not isinstance(codes, Mapping):
            continue
        for code, n in codes.items():
            if isinstance(n, int):
                counts[str(row["planner"])][str(code)] += n
    return {p: counts[p] for p in planners if p in counts}


def violations_figure(rows: Sequence[Mapping[str, Any]], planners: Sequence[str]) -> Any:
    """A heat map of violation codes (columns, most frequent first) per planner (rows)."""
    counts = violation_counts(rows, planners)
    total: Counter[str] = Counter()
    for per in counts.values():
        total.update(per)
    if not total:
        return None
    plt = _pyplot()
    codes = [c for c, _ in total.most_common(TOP_CODES)]
    shown = list(planners)
    grid = [[counts.get(p, Counter()).get(c, 0) for c in codes] for p in shown]
    figure, axis = plt.subplots(figsize=(max(5.0, 0.55 * len(codes) + 2.5),
                                         max(2.4, 0.3 * len(shown) + 1.8)))
    image = axis.imshow(grid, cmap="Reds", aspect="auto")
    axis.set_xticks(range(len(codes)), _shown(codes), rotation=40, ha="right", fontsize=7)
    axis.set_yticks(range(len(shown)), _shown(shown))
    peak = max(max(line) for line in grid) or 1
    for y, line in enumerate(grid):
        for x, value in enumerate(line):
            if value:
                axis.text(x, y, str(value), ha="center", va="center", fontsize=7,
                          color="white" if value > peak / 2 else "black")
    axis.set_title("gate violations by code and planner (plans scored)")
    axis.spines[:].set_visible(False)
    figure.colorbar(image, ax=axis, fraction=0.03, pad=0.02)
    figure.tight_layout()
    return figure


RECOVERY_OUTCOMES = (("recovered", "#4e9a06"), ("not recovered", "#cc0000"),
                     ("no failure injected", "#babdb6"), ("error row", "#555753"))


def recovery_counts(rows: Sequence[Mapping[str, Any]], planners: Sequence[str]
                    ) -> dict[str, Counter[str]]:
    """planner -> outcome -> episodes, over exec-mode rows (`RECOVERY_OUTCOMES`)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        if row.get("mode") != "exec":
            continue
        recovered = row.get("recovered")
        outcome = ("error row" if row.get("error") else "no failure injected"
                   if recovered is None else "recovered" if recovered == 1 else "not recovered")
        counts[str(row["planner"])][outcome] += 1
    return {p: counts[p] for p in planners if p in counts}


def recovery_figure(rows: Sequence[Mapping[str, Any]], planners: Sequence[str]) -> Any:
    """Stacked horizontal bars: the episodes of each planner by recovery outcome."""
    counts = recovery_counts(rows, planners)
    if not counts:
        return None
    plt = _pyplot()
    shown = [p for p in planners if p in counts]
    figure, axis = plt.subplots(figsize=(7.0, max(2.4, 0.32 * len(shown) + 1.8)))
    left = [0] * len(shown)
    for outcome, colour in RECOVERY_OUTCOMES:
        values = [counts[p].get(outcome, 0) for p in shown]
        if any(values):
            axis.barh(range(len(shown)), values, left=left, color=colour, label=outcome)
            left = [a + b for a, b in zip(left, values)]
    axis.set_yticks(range(len(shown)), _shown(shown))
    axis.invert_yaxis()
    axis.set_xlabel("episodes")
    axis.set_title("recovery after an injected failure (exec mode)")
    axis.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.28), ncols=4,
                frameon=False)
    figure.tight_layout()
    return figure


def close(figure: Any) -> None:
    _pyplot().close(figure)


def svg(figure: Any) -> str:
    """The figure as SVG text (closed afterwards)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    close(figure)
    text = buffer.getvalue()
    return text[text.find("<svg"):]
