"""Reports from a run's results.jsonl: summary, comparisons with statistics, Markdown, plots.

`write_report(run_dir)` reads `<run_dir>/results.jsonl` (the latest row per key; truncated lines
skipped and counted) and writes:

* `summary.csv` — per (model, planner): rows, tasks, error rows and error rate, then for every
  metric of the run's mode its task-level mean, bootstrap CI (low, high, half-width) and the
  number of tasks with a value. Error rows are excluded from every mean (never counted as 0).
* `comparisons.csv` — the candidate planner vs every baseline, per model (and pooled over
  models, with (model, task) as the unit, when there are several), for each compared metric:
  means, mean difference with its bootstrap CI, permutation p, Holm-adjusted p, significant.
  A family for Holm–Bonferroni is all comparisons of one metric in the file.
* `report.md` — both tables in Markdown.
* `success_by_planner.png` — the primary metric per planner with CIs (matplotlib, optional:
  skipped with a note in report.md when it is not installed).

Rows of a task its scene cannot do (`infeasible`: the reason) are left out of every mean and
comparison; report.md says how many tasks that leaves out, and which.

Per-task values are means over seeds (`stats` module docstring). Every CI and test is seeded
from its own name, so the numbers do not depend on which other comparisons are in the report.
"""
from __future__ import annotations

import csv
import html
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.files import write_texts_atomic
from sage_pddl.pddl.limits import printable

from . import metrics as metric_defs
from . import plots, stats
from .results import latest_rows, read_results, read_run_config

POOLED = "(pooled)"
DEFAULT_COMPARED = {"plan": ("sim_goal_success", "sim_goal_conditions", "gate_goal_success",
                             "gate_goal_conditions", "executability", "hallucination"),
                    "exec": ("task_success", "task_goal_conditions", "step_success",
                             "recovered")}


class ReportError(SageError):
    """A run folder that cannot be reported on."""


@dataclass(frozen=True)
class Analysis:
    """What a report is made of: the run's latest rows and settings, and the numbers computed
    from them (summary records of `summarize`, comparisons of `compare_planners`)."""

    rows: tuple[dict[str, Any], ...]
    config: Mapping[str, Any]
    mode: str
    planners: tuple[str, ...]
    models: tuple[str, ...]
    summary: tuple[dict[str, Any], ...]
    comparisons: tuple[stats.Comparison, ...]
    candidate: str
    level: float
    alpha: float


@dataclass(frozen=True)
class ReportFiles:
    run_dir: Path
    summary: Path
    comparisons: Path
    markdown: Path
    plots: tuple[Path, ...] = ()
    notes: tuple[str, ...] = field(default=())
    analysis: Analysis | None = None


def is_error(row: Mapping[str, Any]) -> bool:
    return bool(row.get("error"))


def task_values(rows: Iterable[Mapping[str, Any]], metric: str) -> dict[str, float]:
    """task id -> mean over seeds of `metric`, from non-error rows that have a value; in task
    id order, with an exactly rounded sum, so that no statistic depends on the order the rows
    were written in (cells run concurrently finish in any order)."""
    per_task: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if is_error(row):
            continue
        value = row.get(metric)
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            per_task[str(row["task_id"])].append(float(value))
    return {task: math.fsum(per_task[task]) / len(per_task[task]) for task in sorted(per_task)}


def load_run(run_dir: str | Path) -> tuple[list[dict], dict, int]:
    """(latest rows, stored config, unreadable lines) of a run folder."""
    run_dir = Path(run_dir)
    results = run_dir / "results.jsonl"
    if not results.exists():
        raise ReportError(f"{run_dir}: no results.jsonl here (is this a run folder made by "
                          "'sage-pddl bench'?)")
    rows, bad = read_results(results)
    config = read_run_config(run_dir).get("config", {})
    return latest_rows(rows), config, bad


def _feasible(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of tasks their scene can do, and the ids of the infeasible tasks (rows whose
    `infeasible` gives a reason), which no success rate counts."""
    infeasible = sorted({str(r["task_id"]) for r in rows if r.get("infeasible")})
    return [r for r in rows if not r.get("infeasible")], infeasible


def _ordered(values: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    seen = list(dict.fromkeys(values))
    first = [p for p in preferred if p in seen]
    return first + [v for v in seen if v not in first]


def summarize(rows: Sequence[Mapping[str, Any]], mode: str, *,
              resamples: int = stats.DEFAULT_RESAMPLES, level: float = stats.DEFAULT_LEVEL,
              planners: Sequence[str] = (), models: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One summary record per (model, planner) (see module docstring)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(str(row["model"]), str(row["planner"]))].append(row)
    out = []
    for model in _ordered((m for m, _ in groups), models):
        for planner in _ordered((p for m, p in groups if m == model), planners):
            group = groups.get((model, planner))
            if not group:
                continue
            errors = sum(1 for r in group if is_error(r))
            record: dict[str, Any] = {
                "model": model, "planner": planner, "rows": len(group),
                "tasks": len({r["task_id"] for r in group}), "errors": errors,
                "error_rate": errors / len(group)}
            for spec in metric_defs.metrics_for(mode):
                values = task_values(group, spec.name)
                interval = stats.bootstrap_ci(list(values.values()), resamples=resamples,
                                              level=level,
                                              seed=f"ci/{model}/{planner}/{spec.name}")
                record[spec.name] = interval.mean
                record[f"{spec.name}_low"] = interval.low
                record[f"{spec.name}_high"] = interval.high
                record[f"{spec.name}_ci"] = interval.half_width
                record[f"{spec.name}_n"] = interval.n
            out.append(record)
    return out


def compare_planners(rows: Sequence[Mapping[str, Any]], candidate: str, baselines: Sequence[str],
                     compared: Sequence[str], *, resamples: int = stats.DEFAULT_RESAMPLES,
                     level: float = stats.DEFAULT_LEVEL, alpha: float = stats.DEFAULT_ALPHA,
                     models: Sequence[str] = ()) -> list[stats.Comparison]:
    """Candidate vs each baseline, per model (in the order of `models`, then as first seen)
    and pooled; Holm within each metric's family."""
    models = _ordered((str(r["model"]) for r in rows), models)
    by: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by[(str(row["model"]), str(row["planner"]))].append(row)
    result: list[stats.Comparison] = []
    for metric in compared:
        family = []
        scopes = [(m, [m]) for m in models] + ([(POOLED, models)] if len(models) > 1 else [])
        for scope, scope_models in scopes:
            cand = _scoped_values(by, scope_models, candidate, metric)
            for baseline in baselines:
                if baseline == candidate:
                    continue
                base = _scoped_values(by, scope_models, baseline, metric)
                if not cand or not base or not set(cand) & set(base):
                    continue
                name = f"{metric}/{scope}/{candidate}/vs/{baseline}"
                family.append(stats.compare(name, metric, scope, candidate, baseline, cand, base,
                                            resamples=resamples, level=level))
        result.extend(stats.adjust_family(family, alpha))
    return result


def _scoped_values(by: Mapping[tuple[str, str], list], models: Sequence[str], planner: str,
                   metric: str) -> dict[Any, float]:
    values: dict[Any, float] = {}
    for model in models:
        for task, value in task_values(by.get((model, planner), []), metric).items():
            values[(model, task) if len(models) > 1 else task] = value
    return values


# ----------------------------------------------------------------------------------- writing
def write_report(run_dir: str | Path, *, candidate: str | None = None,
                 baselines: Sequence[str] | None = None, compared: Sequence[str] | None = None,
                 resamples: int = stats.DEFAULT_RESAMPLES, level: float = stats.DEFAULT_LEVEL,
                 alpha: float = stats.DEFAULT_ALPHA, plots: bool = True) -> ReportFiles:
    """Write summary.csv, comparisons.csv, report.md (and a plot) into `run_dir`."""
    run_dir = Path(run_dir)
    rows, config, bad = load_run(run_dir)
    if not rows:
        raise ReportError(f"{run_dir}/results.jsonl holds no rows yet")
    mode = str(config.get("mode") or rows[0].get("mode") or "plan")
    planners = _ordered((str(r["planner"]) for r in rows), config.get("planners") or ())
    models = _ordered((str(r["model"]) for r in rows), config.get("models") or ())
    candidate = candidate or planners[0]
    if candidate not in planners:
        raise ReportError(f"report setting 'candidate': no rows for planner {candidate!r} "
                          f"(planners in the run: {', '.join(planners)})")
    missing = [b for b in baselines or () if b not in planners]
    if missing:
        raise ReportError(f"report setting 'baselines': no rows for planner(s) "
                          f"{', '.join(map(repr, missing))} (planners in the run: "
                          f"{', '.join(planners)})")
    baselines = [b for b in (baselines or planners or ()) if b != candidate]
    compared = [metric_defs.current_name(m, mode)
                for m in (compared or DEFAULT_COMPARED.get(mode) or ())]
    unknown = [m for m in compared if m not in metric_defs.METRIC_BY_NAME]
    if unknown:
        raise ReportError(f"report setting 'metrics': unknown metric(s) {', '.join(unknown)}; "
                          f"known: {', '.join(metric_defs.METRIC_BY_NAME)}")
    rows, infeasible = _feasible(rows)
    if not rows:
        raise ReportError(f"{run_dir}/results.jsonl holds rows only for tasks their scene "
                          f"cannot do ({', '.join(infeasible)})")
    notes = []
    if infeasible:
        notes.append(f"{len(infeasible)} infeasible task(s) left out of every mean and "
                     f"comparison (their scene cannot reach the goal; the row's `infeasible` "
                     f"says why): {', '.join(infeasible)}")
    if bad:
        notes.append(f"{bad} unreadable line(s) in results.jsonl were skipped (a run cut "
                     "short mid-write leaves one)")
    summary = summarize(rows, mode, resamples=resamples, level=level, planners=planners,
                        models=models)
    comparisons = compare_planners(rows, candidate, baselines, compared, resamples=resamples,
                                   level=level, alpha=alpha, models=models)
    files = ReportFiles(run_dir, run_dir / "summary.csv", run_dir / "comparisons.csv",
                        run_dir / "report.md")
    images: dict[Path, bytes] = {}
    if plots:
        path, image, note = _plot_primary(run_dir, summary, mode, level)
        if path and image is not None:
            images[path] = image
        if note:
            notes.append(note)
    plot_paths = list(images)
    markdown = render_markdown(config, mode, summary, comparisons, candidate, level, alpha,
                               notes, plot_paths)
    write_texts_atomic({files.summary: _summary_csv(summary, mode),
                        files.comparisons: _comparisons_csv(comparisons),
                        files.markdown: markdown, **images})  # the plot with them: none empty
    analysis = Analysis(tuple(rows), config, mode, tuple(planners), tuple(models),
                        tuple(summary), tuple(comparisons), candidate, level, alpha)
    return ReportFiles(files.run_dir, files.summary, files.comparisons, files.markdown,
                       tuple(plot_paths), tuple(notes), analysis)


def _number(value: Any, digits: int = 6) -> Any:
    if isinstance(value, float):
        return "" if math.isnan(value) else round(value, digits)
    return value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a text cell of a CSV may not start with (a spreadsheet reads it as a formula)."""


def _csv_text(columns: Sequence[str], records: Iterable[Mapping[str, Any]]) -> str:
    """CSV of `records`; a text cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`
    first: a model named `=HYPERLINK(...)`) gets a leading `'`, as OWASP advises."""
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for record in records:
        writer.writerow({c: "'" + v if isinstance(v, str) and v[:1] in FORMULA_STARTS else v
                         for c, v in record.items()})
    return out.getvalue()


def _summary_csv(summary: Sequence[Mapping[str, Any]], mode: str) -> str:
    columns = ["model", "planner", "rows", "tasks", "errors", "error_rate"]
    for spec in metric_defs.metrics_for(mode):
        columns += [spec.name, f"{spec.name}_ci", f"{spec.name}_low", f"{spec.name}_high",
                    f"{spec.name}_n"]
    return _csv_text(columns, ({c: _number(record.get(c)) for c in columns}
                               for record in summary))


COMPARISON_COLUMNS = ["metric", "model", "candidate", "baseline", "n_tasks", "candidate_mean",
                      "baseline_mean", "diff", "diff_low", "diff_high", "p", "p_holm",
                      "significant"]


def _comparison_record(c: stats.Comparison) -> dict[str, Any]:
    return {"metric": c.metric, "model": c.model, "candidate": c.candidate,
            "baseline": c.baseline, "n_tasks": c.n_tasks, "candidate_mean": c.candidate_mean,
            "baseline_mean": c.baseline_mean, "diff": c.diff.mean, "diff_low": c.diff.low,
            "diff_high": c.diff.high, "p": c.p, "p_holm": c.p_holm,
            "significant": c.significant}


def _comparisons_csv(comparisons: Sequence[stats.Comparison]) -> str:
    return _csv_text(COMPARISON_COLUMNS, ({k: _number(v) for k, v in
                                           _comparison_record(c).items()}
                                          for c in comparisons))


def _md(text: Any) -> str:
    """A name from the data as one Markdown table cell: `|` escaped, line breaks as spaces,
    HTML's `<`, `>` and `&` as entities (Markdown renderers show raw HTML live: a model named
    `<script>` must stay text), other control characters as escapes (`printable`)."""
    cell = " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").splitlines())
    return printable(html.escape(cell, quote=False))


def cell_text(record: Mapping[str, Any], metric: str) -> str:
    """A summary record's mean of `metric` with its CI half-width, as the tables show it."""
    mean = record.get(metric)
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    spec = metric_defs.METRIC_BY_NAME[metric]
    digits = 3 if spec.rate or abs(mean) < 100 else 0
    half = record.get(f"{metric}_ci") or 0.0
    text = f"{mean:.{digits}f}"
    if record.get(f"{metric}_n", 0) > 1:
        text += f" ± {half:.{digits}f}"
    return text


TABLE_METRICS = {"plan": ("sim_goal_success", "sim_goal_conditions", "gate_goal_success",
                          "gate_goal_conditions", "executability", "precondition_violations",
                          "hallucination", "redundancy", "object_completeness", "step_ratio",
                          "calls", "total_tokens", "latency_s"),
                 "exec": ("task_success", "task_goal_conditions", "sim_goal_success",
                          "gate_goal_success", "step_success", "dispatch_success",
                          "blocked", "repairs", "recovered", "executability", "calls",
                          "total_tokens", "latency_s")}

VIEWS = {"plan": ("`sim_*`: the simulator's view, the plan run open-loop from the initial "
                  "state with each refused step a no-op and the goal read at the end, as "
                  "AI2-THOR runs it and people judge it (compare these with the SAGE paper and "
                  "with human ratings). `gate_*`: the gate's strict view, every step accepted "
                  "and the goal reached (goal conditions read after the accepted prefix): "
                  "what certifies a plan."),
         "exec": ("`task_*`: the episode (repairs included) in the environment's true state. "
                  "`sim_goal_success` and `gate_goal_success`: the planner's first plan, run "
                  "open-loop with refused steps as no-ops, and certified whole by the gate.")}
"""What the report says of the fields that score a goal, per mode: which view each is."""


def render_markdown(config: Mapping[str, Any], mode: str, summary: Sequence[Mapping[str, Any]],
                    comparisons: Sequence[stats.Comparison], candidate: str, level: float,
                    alpha: float, notes: Sequence[str], plots: Sequence[Path]) -> str:
    shown = TABLE_METRICS.get(mode, ())
    lines = [f"# Benchmark report: run `{config.get('run_id', '?')}`", "",
             f"Mode **{mode}**, LLM backend `{config.get('llm', '?')}`"
             + (", gate before execute" if config.get("gate_before_execute") else "")
             + (f", injected failure `{config.get('inject_failure')}`"
                if config.get("inject_failure") else "")
             + f". Means over tasks (each task = mean over its seeds) ± half-width of the "
               f"{level:.0%} task-level bootstrap CI; error rows are excluded from the means and "
               "counted in `err`.", "", VIEWS.get(mode, ""), ""]
    header = ["model", "planner", "n", "err"] + list(shown)
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for record in summary:
        cells = [_md(record["model"]), _md(record["planner"]), str(record["rows"]),
                 f"{record['error_rate']:.0%}"] + [cell_text(record, m) for m in shown]
        lines.append("| " + " | ".join(cells) + " |")
    if comparisons:
        lines += ["", f"## {candidate} vs baselines", "",
                  "Paired on tasks; diff = candidate − baseline with its bootstrap CI; p from a "
                  "two-sided sign-flip permutation test; Holm–Bonferroni within each metric; "
                  f"significant when p_holm < {alpha}.", "",
                  "| metric | model | baseline | tasks | candidate | baseline | diff [CI] | p | "
                  "p_holm | sig. |", "|---|---|---|---|---|---|---|---|---|---|"]
        for c in comparisons:
            lines.append(
                f"| {c.metric} | {_md(c.model)} | {_md(c.baseline)} | {c.n_tasks} | "
                f"{c.candidate_mean:.3f} | {c.baseline_mean:.3f} | {c.diff.mean:+.3f} "
                f"[{c.diff.low:+.3f}, {c.diff.high:+.3f}] | {c.p:.4f} | {c.p_holm:.4f} | "
                f"{'yes' if c.significant else 'no'} |")
    for plot in plots:
        lines += ["", f"![{plot.stem}]({plot.name})"]
    if notes:
        lines += ["", "Notes:"] + [f"- {printable(html.escape(n, quote=False))}" for n in notes]
    return "\n".join(lines) + "\n"


def _plot_primary(run_dir: Path, summary: Sequence[Mapping[str, Any]], mode: str,
                  level: float) -> tuple[Path | None, bytes | None, str | None]:
    """(where the plot goes, its PNG bytes, why there is none): drawn in memory, written with
    the report's other files as a set."""
    reason = plots.missing()
    if reason:
        return None, None, reason
    figure = plots.success_figure(summary, mode, level)
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    plots.close(figure)
    return run_dir / "success_by_planner.png", image.getvalue(), None
