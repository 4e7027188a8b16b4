"""The episode traces and the HTML report of a run, and the pages opened in headless Chromium.

The runs are made with the reference responder (not a model) with K10's first answers broken
(every MoveTo left out), so SAGE's gate refuses a block and refines it, and Direct keeps the
refused plan: the report has a refused step and its feedback to show. The browser tests skip
with the reason when Chromium, chromedriver or Selenium is absent (`tests/browser.py`)."""
from __future__ import annotations

import json
import re

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark, write_report
from sage_pddl.bench.html_report import _script_json, write_html
from sage_pddl.bench.oracle import reference_responder
from sage_pddl.bench.results import read_results
from sage_pddl.bench.trace import MAX_CALLS, MAX_TEXT, Recorder, episode_name, read_episode
from sage_pddl.llm import get_backend
from tests.browser import browser_missing, console_errors, headless_chromium

from .conftest import TASKS

BROKEN = "K10"


def _run(tmp_path_factory, tasks, ithor, run_id, spec=TASKS, **settings):
    answer = reference_responder(tasks, lambda task: ithor, broken_tasks=(BROKEN,))
    config = BenchConfig(models=("m",), tasks=(spec,), llm="scripted", progress=False,
                         out=str(tmp_path_factory.mktemp(run_id)), run_id=run_id, **settings)
    run_dir = run_benchmark(config, llm_factory=lambda model: get_backend(
        "scripted", responder=answer, model=model))
    files = write_report(run_dir, resamples=200)
    assert files.analysis is not None
    return run_dir, write_html(run_dir, files.analysis)


@pytest.fixture(scope="module")
def plan_run(tmp_path_factory, tasks, ithor):
    return _run(tmp_path_factory, tasks, ithor, "plan", planners=("SAGE", "Direct"),
                memory="none")


@pytest.fixture(scope="module")
def exec_run(tmp_path_factory, tasks, ithor):
    return _run(tmp_path_factory, tasks, ithor, "exec", "ithor[#K10,#K19]", planners=("SAGE",),
                mode="exec",
                inject_failure="auto", gate_before_execute=True, memory="none")


def _rows(run_dir):
    rows, bad = read_results(run_dir / "results.jsonl")
    assert not bad
    return {(r["planner"], r["task_id"]): r for r in rows}


# ------------------------------------------------------------------------------- traces
def test_every_row_names_its_trace_and_the_trace_tells_the_story(plan_run):
    run_dir, _ = plan_run
    rows = _rows(run_dir)
    for row in rows.values():
        assert "_trace" not in row
        trace = read_episode(run_dir, row["episode"])
        assert trace is not None and trace["key"]["task_id"] == row["task_id"]
        assert row["episode"] == episode_name(row)
        kinds = [e["kind"] for e in trace["events"]]
        assert kinds[0] == "call" and "plan" in kinds and kinds[-1] == "verdict"
        assert sum(1 for k in kinds if k == "call") == row["calls"]
        assert trace["task"]["instruction"] and trace["task"]["goal"].startswith("(")
        assert trace["end"]["goal"] and all(isinstance(g["met"], bool) for g in trace["end"]["goal"])
    sage = read_episode(run_dir, rows[("SAGE", BROKEN)]["episode"])
    plan = next(e for e in sage["events"] if e["kind"] == "plan")
    rejected = [a for b in plan["blocks"] for a in b["rejected"]]
    assert rejected and all(a["violations"] for a in rejected)
    assert all(v["code"] and v["message"] for a in rejected for v in a["violations"])
    refine = next(e for e in sage["events"] if e["kind"] == "call" and e["role"] == "refine")
    assert f"[{rejected[0]['violations'][0]['code']}]" in refine["feedback"]
    assert refine["feedback"] in refine["messages"][-1]["content"]
    direct = read_episode(run_dir, rows[("Direct", BROKEN)]["episode"])
    verdict = direct["events"][-1]
    assert not verdict["valid"] and verdict["violations"]
    assert sum(g["met"] for g in direct["end"]["goal"]) < len(direct["end"]["goal"])
    assert direct["end"]["gate_success"] == 0.0


def test_exec_traces_keep_steps_world_answers_injections_and_repairs(exec_run):
    run_dir, _ = exec_run
    for row in _rows(run_dir).values():
        trace = read_episode(run_dir, row["episode"])
        steps = [e for e in trace["events"] if e["kind"] == "step"]
        assert len(steps) == row["attempted"]
        assert all(s["message"] for s in steps if s["status"] != "executed")
        if row["injected_at"] is not None:
            assert any(s["status"] == "injected" for s in steps)
            assert any(e["kind"] == "plan" and e["phase"] == "repair" for e in trace["events"])
        assert trace["end"]["world_success"] == row["task_success"]
        met = sum(g["met"] for g in trace["end"]["goal"]) / len(trace["end"]["goal"])
        assert met == pytest.approx(row["task_goal_conditions"])


def test_a_trace_is_bounded():
    recorder = Recorder()
    long = "x" * (MAX_TEXT + 500)
    recorder.call("expand", [{"role": "user", "content": long}], long)
    for _ in range(MAX_CALLS + 3):
        recorder.call("refine", [{"role": "user", "content": "short"}], "answer")
    first = recorder.events[0]
    assert len(first["messages"][0]["content"]) < MAX_TEXT + 100
    assert first["answer"].endswith("500 more characters not kept]")
    assert "omitted" in recorder.events[-1] and "messages" not in recorder.events[-1]
    assert recorder.events[-1]["n"] == MAX_CALLS + 4


def test_episode_names_do_not_collide():
    one = {"model": "m", "planner": "a/b", "task_id": "K01", "seed": 0, "mode": "plan"}
    two = dict(one, planner="a_b")
    assert episode_name(one) != episode_name(two)
    assert re.fullmatch(r"[A-Za-z0-9._+-]+", episode_name(one))


# ------------------------------------------------------------------------------ the files
def test_the_report_files(plan_run):
    run_dir, index = plan_run
    page = index.read_text(encoding="utf-8")
    rows = _rows(run_dir)
    assert page.count('class="cell ') == len(rows)
    for row in rows.values():
        script = (index.parent / "episodes" / f"{row['episode']}.js").read_text()
        assert script.startswith(f'SageReport.episode("{row["episode"]}",')
        assert f'href="#ep/{row["episode"]}"' in page
    assert 'id="plot-success"' in page and 'id="plot-violations"' in page
    assert "<script src" not in page and "http://" not in page.split("<svg")[0]
    domain = (index.parent / "domain-ithor.html").read_text(encoding="utf-8")
    assert domain.count('class="node action"') == 20  # one per action of ithor.pddl


def test_text_from_a_run_cannot_inject_markup(tmp_path):
    hostile = "</script><img src=x onerror=alert(1)>"
    assert "</script>" not in _script_json({"answer": hostile})
    assert json.loads(_script_json({"a": hostile})) == {"a": hostile}
    from sage_pddl.bench.report import Analysis

    row = {"model": "m", "planner": "P", "task_id": hostile, "seed": 0, "mode": "plan",
           "taskset": hostile, "difficulty": "easy", "room": hostile, "gate_goal_success": 0.0,
           "error": None, "violation_codes": {hostile: 1}, "episode": "../../outside"}
    analysis = Analysis((row,), {"run_id": "r"}, "plan", ("P",), ("m",), (), (), "P", 0.95,
                        0.05)
    page = write_html(tmp_path, analysis).read_text(encoding="utf-8")
    body = page.split("<body>", 1)[1].split("<script>", 1)[0]
    assert "<img src=x" not in body and "&lt;img src=x" in body
    # a row naming a trace outside the run is not followed; its cell gets a name of its own
    assert not (tmp_path.parent / "outside.js").exists()
    assert [p.name for p in (tmp_path / "html" / "episodes").iterdir()] == [
        f"{episode_name(row)}.js"]


def test_report_command_writes_the_page(plan_run, capsys):
    from sage_pddl import cli

    run_dir, index = plan_run
    index.unlink()
    assert cli.main(["report", str(run_dir), "--html", "--resamples", "100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["html"] == str(index)
    assert index.exists()


# ----------------------------------------------------------------------------- in Chromium
needs_browser = pytest.mark.skipif(browser_missing() is not None,
                                   reason=f"headless Chromium: {browser_missing()}")


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as driver:
        yield driver


def _wait(driver, css, timeout=10.0):
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(
        expected_conditions.visibility_of_element_located(("css selector", css)))


@needs_browser
def test_grid_page_loads_without_console_errors(browser, plan_run):
    run_dir, index = plan_run
    browser.get(index.as_uri())
    assert console_errors(browser) == []
    cells = browser.find_elements("css selector", "table.grid a.cell")
    assert len(cells) == len(_rows(run_dir))
    assert browser.find_element("css selector", "table.summary").is_displayed()
    assert len(browser.find_elements("css selector", "#plots figure.plot img")) >= 2
    assert not browser.execute_script("return Object.keys(window.SageReport).length === 0")
    # no episode is loaded until one is opened
    assert browser.find_elements("css selector", "script[src^='episodes/']") == []


@needs_browser
def test_a_click_on_a_cell_opens_its_episode_timeline(browser, plan_run):
    run_dir, index = plan_run
    name = _rows(run_dir)[("SAGE", BROKEN)]["episode"]
    browser.get(index.as_uri())
    browser.find_element("css selector", f'a.cell[href="#ep/{name}"]').click()
    _wait(browser, "#episode ol.timeline")
    assert browser.current_url.endswith(f"#ep/{name}")
    assert browser.find_element("css selector", "#episode .instruction").text
    feedback = browser.find_element("css selector", "#episode .feedback pre")
    assert feedback.text.strip()
    assert browser.find_elements("css selector", "#episode ol.steps li.refused")
    assert browser.find_elements("css selector", "#episode ul.goal li")
    prompt = browser.find_element("css selector", "#episode li.call details")
    assert not prompt.get_attribute("open")  # folded until asked
    browser.find_element("css selector", "#episode .bar a").click()
    _wait(browser, "table.grid")
    assert not browser.find_element("css selector", "#episode").is_displayed()
    assert console_errors(browser) == []


@needs_browser
def test_filters_hide_the_tasks_that_do_not_match(browser, plan_run):
    from selenium.webdriver.support.ui import Select

    _, index = plan_run
    browser.get(index.as_uri())
    rows = browser.find_elements("css selector", "table.grid tbody tr")
    Select(browser.find_element("css selector", "select[data-filter=outcome]")).select_by_value(
        "fail")
    assert any(BROKEN in r.text for r in rows if r.is_displayed())
    browser.find_element("css selector", "input[data-filter=text]").send_keys(BROKEN.lower())
    shown = [r for r in rows if r.is_displayed()]
    assert len(shown) == 1 and BROKEN in shown[0].text and len(rows) == 3
    assert browser.find_element("css selector", "#shown-count").text == "1 of 3 tasks"
    assert console_errors(browser) == []


@needs_browser
def test_exec_episode_shows_the_world_answers_and_the_repair(browser, exec_run):
    run_dir, index = exec_run
    row = next(r for r in _rows(run_dir).values() if r["injected_at"] is not None)
    browser.get(f"{index.as_uri()}#ep/{row['episode']}")
    _wait(browser, "#episode ol.timeline")
    assert browser.find_elements("css selector", "#episode li.step.injected")
    assert browser.find_elements("css selector", "#episode li.step.executed .world")
    assert "Repair returned" in browser.find_element("css selector", "#episode").text
    assert console_errors(browser) == []


@needs_browser
def test_domain_page_draws_the_causal_graph(browser, plan_run):
    from selenium.webdriver.common.action_chains import ActionChains

    _, index = plan_run
    browser.get((index.parent / "domain-ithor.html").as_uri())
    actions = browser.find_elements("css selector", "svg.causal .node.action")
    assert len(actions) == 20
    assert browser.find_elements("css selector", "svg.causal path.edge.adds")
    assert "requires" in browser.find_element("css selector", "table.actions").text.lower()
    ActionChains(browser).move_to_element(actions[0]).perform()
    assert browser.find_elements("css selector", "svg.causal path.edge.lit")
    assert console_errors(browser) == []
