"""A run as a static HTML report: the grid, the tables, the plots, every episode and the domains.

`write_html(run_dir, analysis)` writes `RUN/html/`:

* `index.html` — one self-contained page (its style and script inline, no network, opens from
  `file://`): the grid of tasks × planners (per model and seed), each cell coloured by the
  gate's view of success (left half: every step accepted and the goal reached) and the world's
  (right half: plan mode, the plan run open-loop with a refused step a no-op, as a simulator
  runs it; exec mode, the environment's goal test), with goal-condition success and the cell's
  numbers on hover, filterable by task set, difficulty, room and outcome; the summary and
  comparison tables of `report.md` (same numbers: `report.summarize`, `compare_planners`);
  the plots of `plots.py` as inline SVG images.
* `episodes/<name>.js` — one small script per cell (its row and its trace, `trace.py`), loaded
  by a `<script>` tag only when the cell is opened (a script tag works from `file://`, where
  `fetch` does not); the page then shows the episode as a timeline at `index.html#ep/<name>`.
* `domain-<name>.html` — each domain of the run at a glance (`domain_view.py`).

Every text from a run (instructions, prompts, model answers) is escaped or set as text by the
script, never parsed as HTML: a model's answer cannot inject markup into the page.
"""
from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from sage_pddl.domains import load_domain
from sage_pddl.pddl.errors import SageError

from . import metrics as metric_defs
from . import plots
from .domain_view import domain_section
from .report import TABLE_METRICS, Analysis, cell_text
from .trace import episode_name, is_episode_name, read_episode

HTML_DIR = "html"
EPISODE_SCRIPTS = "episodes"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _asset(name: str) -> str:
    return (resources.files("sage_pddl.bench") / "assets" / name).read_text(encoding="utf-8")


def _script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element and as a JavaScript expression."""
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _page(title: str, body: str, script: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_asset('report.css')}</style></head>"
            f"<body>{body}{f'<script>{script}</script>' if script else ''}</body></html>\n")


def _view(value: Any) -> str:
    """A success value as a cell class: ok (1), fail (0), na (no value)."""
    if isinstance(value, bool):
        value = float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return "ok" if value >= 1.0 else "fail"
    return "na"


def _views(row: Mapping[str, Any], trace: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """(gate's view, world's view) of one row's success (see the module docstring)."""
    if row.get("mode") == "exec":
        return row.get("gate_goal_success"), row.get("task_success")
    world = row.get("sim_goal_success")
    if world is None:  # a row written before the simulator's view was scored
        world = (trace or {}).get("end", {}).get("world_success")
    return row.get("gate_goal_success"), world


def _tip(row: Mapping[str, Any], trace: Mapping[str, Any] | None, gate: Any, world: Any) -> str:
    words = {"ok": "yes", "fail": "no", "na": "—"}
    lines = [f"{row.get('task_id')} · {row.get('planner')} · seed {row.get('seed')}"]
    if row.get("error"):
        lines.append(f"error ({row.get('error_kind')}): {str(row['error'])[:160]}")
    goal = (trace or {}).get("end", {}).get("goal") or []
    conditions = row.get("task_goal_conditions" if row.get("mode") == "exec"
                         else "sim_goal_conditions")
    if goal:
        met = sum(1 for g in goal if g.get("met"))
        lines.append(f"goal conditions: {met}/{len(goal)} met")
    elif isinstance(conditions, (int, float)):
        lines.append(f"goal conditions: {conditions:.0%} met")
    lines.append(f"gate: {words[_view(gate)]} · world: {words[_view(world)]}")
    numbers = []
    for name, label in (("n_steps", "steps"), ("executability", "executable"),
                        ("calls", "calls"), ("total_tokens", "tokens")):
        value = row.get(name)
        if isinstance(value, (int, float)):
            numbers.append(f"{value:.0%} {label}" if name == "executability"
                           else f"{value:,} {label}")
    if numbers:
        lines.append(" · ".join(numbers))
    codes = row.get("violation_codes")
    if isinstance(codes, Mapping) and codes:
        lines.append("violations: " + ", ".join(f"{c} ×{n}" for c, n in codes.items()))
    if row.get("mode") == "exec":
        lines.append(f"repairs {row.get('repairs', 0)} · blocked {row.get('blocked', 0)}"
                     + (f" · recovered: {'yes' if row.get('recovered') == 1 else 'no'}"
                        if row.get("recovered") is not None else ""))
    return "\n".join(lines)


def _write_episode_script(folder: Path, name: str, row: Mapping[str, Any],
                          trace: Mapping[str, Any] | None) -> None:
    """`episodes/<name>.js`, rewritten only when its trace or row changed."""
    path = folder / f"{name}.js"
    gate, world = _views(row, trace)
    payload = {"row": dict(row), "trace": trace, "views": {"gate": gate, "world": world}}
    text = f"SageReport.episode({_script_json(name)},{_script_json(payload)});\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.write_text(text, encoding="utf-8")


def _column_key(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row["model"]), str(row["planner"])


def _grid(analysis: Analysis, traces: Mapping[str, Any], names: Mapping[int, str],
          tasks: Sequence[Mapping[str, Any]]) -> str:
    columns = [(m, p) for m in analysis.models for p in analysis.planners
               if any(_column_key(r) == (m, p) for r in analysis.rows)]
    primary = metric_defs.primary_metric(analysis.mode)
    rates = {(r["model"], r["planner"]): r.get(primary) for r in analysis.summary}
    cells: dict[tuple[str, str, str], list[str]] = {}
    outcomes: dict[str, set[str]] = {}
    for index, row in enumerate(analysis.rows):
        name = names[index]
        trace = traces.get(name)
        gate, world = _views(row, trace)
        state = "err" if row.get("error") else f"{_view(gate)}-{_view(world)}"
        link = (f'<a class="cell s-{state}" href="#ep/{_e(name)}" data-tip="'
                f'{_e(_tip(row, trace, gate, world))}" aria-label="{_e(row.get("task_id"))} '
                f'{_e(row.get("planner"))} seed {_e(row.get("seed"))}">'
                f'<i class="g {"err" if row.get("error") else _view(gate)}"></i>'
                f'<i class="w {"err" if row.get("error") else _view(world)}"></i></a>')
        cells.setdefault((str(row["task_id"]), *_column_key(row)), []).append(link)
        outcomes.setdefault(str(row["task_id"]), set()).add(state)
    several_models = len(analysis.models) > 1
    head = ['<th class="task-head" scope="col">task</th>']
    for model, planner in columns:
        rate = rates.get((model, planner))
        shown = f"{rate:.0%}" if isinstance(rate, float) and math.isfinite(rate) else "—"
        label = f"{planner} · {model}" if several_models else planner
        head.append(f'<th class="col" scope="col" title="{_e(label)}: {_e(primary)} {shown}">'
                    f'<span class="name">{_e(label)}</span><span class="rate">{shown}</span></th>')
    body = []
    for task in tasks:
        task_id = task["task_id"]
        body.append(
            f'<tr data-set="{_e(task["taskset"])}" data-difficulty="{_e(task["difficulty"])}" '
            f'data-room="{_e(task["room"])}" '
            f'data-outcomes="{_e(" ".join(sorted(outcomes.get(task_id, ()))))}" '
            f'data-text="{_e((task_id + " " + task["instruction"]).lower())}">'
            f'<th scope="row" class="task"><div class="t"><span class="id">{_e(task_id)}</span>'
            f'<span class="instr" title="{_e(task["instruction"])}">{_e(task["instruction"])}'
            f'</span><span class="meta">{_e(task["difficulty"])} · {_e(task["room"])}</span>'
            '</div></th>'
            + "".join(f'<td>{"".join(cells.get((task_id, m, p), []))}</td>'
                      for m, p in columns)
            + "</tr>")
    return (f'<div class="grid-wrap"><table class="grid"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _filters(tasks: Sequence[Mapping[str, Any]]) -> str:
    def select(field: str, key: str, label: str) -> str:
        values = sorted({str(t[key]) for t in tasks if t[key]})
        options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        return (f'<label>{label} <select data-filter="{field}"><option value="">all</option>'
                f'{options}</select></label>')

    return ('<form class="filters" onsubmit="return false">'
            + select("set", "taskset", "task set") + select("difficulty", "difficulty", "difficulty")
            + select("room", "room", "room")
            + '<label>outcome <select data-filter="outcome"><option value="">all</option>'
              '<option value="fail">some cell failed</option><option value="ok">some cell '
              'succeeded</option><option value="err">some error row</option></select></label>'
              '<label class="grow">search <input type="search" data-filter="text" '
              'placeholder="task id or words of the instruction"></label>'
              '<span class="count" id="shown-count"></span></form>')


def _legend() -> str:
    return ('<div class="legend"><span><i class="sw ok"></i>success</span>'
            '<span><i class="sw fail"></i>failure</span><span><i class="sw na"></i>not judged '
            '</span><span><i class="sw err"></i>error row (excluded from means)</span>'
            '<span class="muted">each cell: left half the gate\'s view, right half the '
            'world\'s; hover for goal conditions, click for the episode</span></div>')


def _summary_table(analysis: Analysis) -> str:
    shown = TABLE_METRICS.get(analysis.mode, ())
    head = "".join(f"<th>{_e(m.replace('_', ' '))}</th>" for m in shown)
    rows = []
    for record in analysis.summary:
        rows.append(f"<tr><td>{_e(record['model'])}</td><th scope=\"row\">"
                    f"{_e(record['planner'])}</th><td class=\"num\">{record['rows']}</td>"
                    f"<td class=\"num\">{record['error_rate']:.0%}</td>"
                    + "".join(f'<td class="num">{_e(cell_text(record, m))}</td>' for m in shown)
                    + "</tr>")
    return ('<div class="table-wrap"><table class="summary"><thead><tr><th>model</th>'
            f'<th>planner</th><th>n</th><th>err</th>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")


def _comparison_table(analysis: Analysis) -> str:
    if not analysis.comparisons:
        return '<p class="muted">No comparison: the run has one planner.</p>'
    rows = []
    for c in analysis.comparisons:
        sign = "pos" if c.diff.mean > 0 else "neg" if c.diff.mean < 0 else ""
        rows.append(
            f"<tr class=\"{'sig' if c.significant else ''}\"><td>{_e(c.metric)}</td>"
            f"<td>{_e(c.model)}</td><th scope=\"row\">{_e(c.baseline)}</th>"
            f"<td class=\"num\">{c.n_tasks}</td><td class=\"num\">{c.candidate_mean:.3f}</td>"
            f"<td class=\"num\">{c.baseline_mean:.3f}</td><td class=\"num {sign}\">"
            f"{c.diff.mean:+.3f} [{c.diff.low:+.3f}, {c.diff.high:+.3f}]</td>"
            f"<td class=\"num\">{c.p:.4f}</td><td class=\"num\">{c.p_holm:.4f}</td>"
            f"<td>{'yes' if c.significant else 'no'}</td></tr>")
    return (f'<h3>{_e(analysis.candidate)} against each baseline</h3><p class="muted">Paired on '
            'tasks; diff = candidate − baseline with its bootstrap CI; p from a two-sided '
            'sign-flip permutation test; Holm–Bonferroni within each metric; significant when '
            f'p_holm &lt; {analysis.alpha}.</p><div class="table-wrap"><table class="comparisons">'
            '<thead><tr><th>metric</th><th>model</th><th>baseline</th><th>tasks</th>'
            '<th>candidate</th><th>baseline</th><th>diff [CI]</th><th>p</th><th>p_holm</th>'
            '<th>sig.</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table></div>")


def _plots(analysis: Analysis) -> str:
    reason = plots.missing()
    if reason:
        return f'<p class="muted">{_e(reason)}</p>'
    rows = list(analysis.rows)
    figures = [
        ("success", plots.success_figure(analysis.summary, analysis.mode, analysis.level), ""),
        ("cost", plots.cost_figure(analysis.summary, analysis.mode),
         "no planner has a success value and call counts"),
        ("violations", plots.violations_figure(rows, analysis.planners),
         "no gate violations in the plans of this run"),
        ("recovery", plots.recovery_figure(rows, analysis.planners),
         "recovery is measured in exec mode (sage-pddl bench --mode exec --inject-failure auto)"),
    ]
    out = []
    for name, figure, empty in figures:
        if figure is None:
            out.append(f'<figure class="plot empty" id="plot-{name}"><figcaption>{_e(name)}: '
                       f'{_e(empty)}</figcaption></figure>')
            continue
        data = base64.b64encode(plots.svg(figure).encode("utf-8")).decode("ascii")
        out.append(f'<figure class="plot" id="plot-{name}"><img alt="{_e(name)} plot" '
                   f'src="data:image/svg+xml;base64,{data}"></figure>')
    return '<div class="plots">' + "".join(out) + "</div>"


def _task_records(rows: Sequence[Mapping[str, Any]], traces: Mapping[str, Any],
                  names: Mapping[int, str]) -> list[dict[str, Any]]:
    tasks: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(rows):
        task_id = str(row["task_id"])
        if task_id in tasks:
            continue
        trace = traces.get(names[index]) or {}
        tasks[task_id] = {"task_id": task_id, "taskset": str(row.get("taskset") or ""),
                          "difficulty": str(row.get("difficulty") or ""),
                          "room": str(row.get("room") or ""),
                          "instruction": str(trace.get("task", {}).get("instruction", ""))}
    return list(tasks.values())


def _domain_pages(folder: Path, analysis: Analysis, run_id: str) -> list[tuple[str, str]]:
    """Write one page per domain of the run; (domain, file name) of each written."""
    dirs = list(analysis.config.get("domains_dirs") or ()) or None
    written = []
    for name in sorted({str(r.get("domain") or "") for r in analysis.rows} - {""}):
        try:
            domain = load_domain(name, domains_dirs=dirs)
        except SageError:
            continue
        file = f"domain-{_safe(name)}.html"
        body = (f'<header class="top"><div class="brand">sage-pddl</div><nav>'
                f'<a href="index.html">← run {_e(run_id)}</a></nav></header>'
                f'<main>{domain_section(domain)}</main>')
        (folder / file).write_text(_page(f"domain {name}", body, _asset("domain.js")),
                                   encoding="utf-8")
        written.append((name, file))
    return written


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def write_html(run_dir: str | Path, analysis: Analysis) -> Path:
    """Write the HTML report of a run (see the module docstring); returns `index.html`."""
    run_dir = Path(run_dir)
    folder = run_dir / HTML_DIR
    scripts = folder / EPISODE_SCRIPTS
    scripts.mkdir(parents=True, exist_ok=True)
    names: dict[int, str] = {}
    traces: dict[str, Any] = {}
    for index, row in enumerate(analysis.rows):
        recorded = is_episode_name(row.get("episode"))
        name = str(row["episode"]) if recorded else episode_name(row)
        names[index] = name
        trace = read_episode(run_dir, name) if recorded else None
        traces[name] = trace
        _write_episode_script(scripts, name, row, trace)
    tasks = _task_records(analysis.rows, traces, names)
    run_id = str(analysis.config.get("run_id") or run_dir.name)
    domains = _domain_pages(folder, analysis, run_id)
    config = analysis.config
    setting = (f"mode <b>{_e(analysis.mode)}</b> · LLM backend <b>{_e(config.get('llm', '?'))}"
               f"</b> · {len(analysis.rows)} cells · {len(tasks)} tasks · "
               f"{len(analysis.planners)} planners · {len(analysis.models)} model(s)"
               + (" · gate before execute" if config.get("gate_before_execute") else "")
               + (f" · injected failure {_e(config.get('inject_failure'))}"
                  if config.get("inject_failure") else ""))
    nav = ('<a href="#grid">Grid</a><a href="#tables">Tables</a><a href="#plots">Plots</a>'
           + "".join(f'<a href="{_e(f)}">Domain {_e(d)}</a>' for d, f in domains))
    body = (
        f'<header class="top"><div class="brand">sage-pddl</div><div class="run">run '
        f'<code>{_e(run_id)}</code></div><nav>{nav}</nav></header>'
        f'<main id="report"><p class="setting">{setting}</p>'
        f'<section id="grid"><h2>Tasks × planners</h2>{_legend()}{_filters(tasks)}'
        f'{_grid(analysis, traces, names, tasks)}</section>'
        f'<section id="tables"><h2>Summary</h2><p class="muted">Means over tasks (each task the '
        f'mean over its seeds) ± half-width of the {analysis.level:.0%} task-level bootstrap CI; '
        'error rows are excluded from the means and counted in err.</p>'
        f'{_summary_table(analysis)}{_comparison_table(analysis)}</section>'
        f'<section id="plots"><h2>Plots</h2>{_plots(analysis)}</section></main>'
        '<section id="episode" hidden aria-live="polite"></section>'
        '<div id="tip" role="tooltip" hidden></div>')
    page = folder / "index.html"
    page.write_text(_page(f"sage-pddl run {run_id}", body, _asset("report.js")),
                    encoding="utf-8")
    return page
