"""The HTML report in a real browser: a demonstration run, its screenshots, and page load times.

    python tools/report_pages.py demo OUT_DIR
        A run on the bundled task sets (iTHOR and ProcTHOR, exec mode on the symbolic world,
        every step gated before dispatch, one failure injected per episode) answered by the
        reference responder (`bench/oracle.py`, NOT a model) with scripted mistakes: for every
        fourth task its first answers leave out every MoveTo/Find step, as a small model does.
        Writes the run and its HTML report; prints the run folder.
    python tools/report_pages.py shots RUN_DIR [--out docs/img] [--episode NAME]
        Screenshots of the grid, one episode (default: the first SAGE episode whose plan the gate
        refused) and the first domain's causal graph, as PNG files.
    python tools/report_pages.py load RUN_DIR [--repeat 5]
        Opens RUN_DIR/html/index.html in headless Chromium `--repeat` times and prints the
        Navigation Timing figures (DOMContentLoaded and load event, ms from navigation start),
        the renderer's main-thread busy time during the load (DevTools TaskDuration), and the
        time from a click on a grid cell to its episode's timeline on screen.

Needs Chromium, chromedriver and Selenium (`tests/browser.py`).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sage_pddl.bench import BenchConfig, run_benchmark, write_report  # noqa: E402
from sage_pddl.bench.config import select_tasks  # noqa: E402
from sage_pddl.bench.html_report import write_html  # noqa: E402
from sage_pddl.bench.oracle import reference_responder  # noqa: E402
from sage_pddl.bench.results import read_results  # noqa: E402
from sage_pddl.bench.trace import read_episode  # noqa: E402
from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.llm import get_backend  # noqa: E402
from tests.browser import browser_missing, console_errors, headless_chromium  # noqa: E402

DEMO_PLANNERS = ("SAGE", "SAGE-NoVerifier", "Direct", "CoT", "Self-Refine")


def demo(out: Path) -> Path:
    config = BenchConfig(planners=DEMO_PLANNERS, tasks=("ithor", "procthor"), llm="scripted",
                         mode="exec", gate_before_execute=True, inject_failure="auto",
                         out=str(out), run_id="demo", models=("reference responder",),
                         resume=True)
    tasks = select_tasks(config.tasks)
    broken = [t.task_id for t in tasks[::4]]
    answer = reference_responder(tasks, lambda task: load_domain(task.domain),
                                 broken_tasks=broken)
    run_dir = run_benchmark(config, llm_factory=lambda model: get_backend(
        "scripted", responder=answer, model=model))
    files = write_report(run_dir, resamples=2000)
    assert files.analysis is not None
    print(write_html(run_dir, files.analysis))
    return run_dir


def _refused_episode(run_dir: Path) -> str:
    """A SAGE episode whose plan the gate refused and refined, with an injected failure:
    recovered if there is one."""
    rows, _ = read_results(run_dir / "results.jsonl")
    found = []
    for row in rows:
        if row.get("planner") != "SAGE" or not row.get("episode"):
            continue
        trace = read_episode(run_dir, row["episode"]) or {}
        if any(e["kind"] == "plan" and any(b["rejected"] for b in e["blocks"])
               for e in trace.get("events", [])) and row.get("injected_at") is not None:
            found.append(row)
    if not found:
        raise SystemExit(f"{run_dir}: no SAGE episode with a refused block")
    return str(max(found, key=lambda r: r.get("recovered") == 1)["episode"])


def shots(run_dir: Path, out: Path, episode: str | None) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    index = run_dir / "html" / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    name = episode or _refused_episode(run_dir)
    with headless_chromium(1300, 860) as driver:
        driver.get(index.as_uri())
        driver.execute_script("var h = document.querySelector('#grid h2');"
                              "window.scrollTo(0, h.getBoundingClientRect().top + scrollY - 56)")
        failing = driver.find_elements("css selector", f'a.cell[href="#ep/{name}"]')
        if failing:  # its tooltip: goal conditions met, the numbers, the violation codes
            ActionChains(driver).move_to_element(failing[0]).perform()
        driver.save_screenshot(str(out / "report-grid.png"))
        driver.set_window_size(1440, 1250)
        driver.get(f"{index.as_uri()}#ep/{name}")
        time.sleep(0.5)
        driver.execute_script(  # the first refusal: the feedback sent, then the plan after it
            "var p = document.getElementById('first-problem');"
            "if (p) { document.getElementById('episode').scrollTop = p.offsetTop - 70; }")
        driver.save_screenshot(str(out / "report-episode.png"))
        domain = sorted((run_dir / "html").glob("domain-*.html"))[0]
        driver.set_window_size(1440, 1300)
        driver.get(domain.as_uri())
        driver.execute_script("document.querySelector('h3').scrollIntoView()")
        driver.save_screenshot(str(out / "report-domain.png"))
        errors = console_errors(driver)
    print(json.dumps({"episode": name, "files": sorted(str(p) for p in out.glob("report-*.png")),
                      "console_errors": errors}, indent=2))


def load(run_dir: Path, repeat: int) -> None:
    index = run_dir / "html" / "index.html"
    timings, opens, busy = [], [], []
    with headless_chromium() as driver:
        driver.execute_cdp_cmd("Performance.enable", {})
        for _ in range(repeat):
            driver.get("about:blank")
            before = _task_seconds(driver)
            driver.get(index.as_uri())
            entry = driver.execute_script(
                "var e = performance.getEntriesByType('navigation')[0];"
                "return [e.domContentLoadedEventEnd, e.loadEventEnd];")
            timings.append(entry)
            busy.append((_task_seconds(driver) - before) * 1000)
            cells = driver.find_elements("css selector", "a.cell")
            cell = cells[len(cells) // 2]
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
            began = time.perf_counter()
            cell.click()
            while not driver.find_elements("css selector", "#episode ol.timeline"):
                time.sleep(0.005)
            opens.append((time.perf_counter() - began) * 1000)
        cells = len(driver.find_elements("css selector", "a.cell"))
        loaded = driver.execute_script(
            "return document.querySelectorAll(\"script[src^='episodes/']\").length")
        errors = console_errors(driver)
    size = index.stat().st_size
    print(json.dumps({
        "page": str(index), "cells": cells, "page_bytes": size, "repeat": repeat,
        "dom_content_loaded_ms": [round(t[0]) for t in timings],
        "load_event_ms": [round(t[1]) for t in timings],
        "load_event_median_ms": round(statistics.median(t[1] for t in timings)),
        "renderer_busy_ms": [round(b) for b in busy],
        "open_episode_ms": [round(t) for t in opens],
        "episode_scripts_loaded_after_last_open": loaded, "console_errors": errors}, indent=2))


def _task_seconds(driver: Any) -> float:
    """The renderer's main-thread busy time so far (DevTools `Performance.getMetrics`
    TaskDuration): the work a page load costs, less sensitive to other load on the machine
    than the wall-clock timings."""
    metrics = driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo")
    p.add_argument("out", type=Path)
    p = sub.add_parser("shots")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    p.add_argument("--episode", default=None)
    p = sub.add_parser("load")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.command in ("shots", "load") and browser_missing():
        print(f"cannot open a browser: {browser_missing()}", file=sys.stderr)
        return 2
    if args.command == "demo":
        demo(args.out)
    elif args.command == "shots":
        shots(args.run_dir, args.out, args.episode)
    else:
        load(args.run_dir, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
