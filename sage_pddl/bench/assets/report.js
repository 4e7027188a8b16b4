/* sage-pddl HTML report: grid filters and tooltips, and the episode view.
 * An episode's data comes from episodes/<name>.js, loaded by a <script> tag when the cell is
 * opened (works from file://); that script calls SageReport.episode(name, data).
 * Every text from the run is set with textContent, never parsed as HTML. */
(function () {
  "use strict";
  var loaded = {};
  var current = null;
  var view = document.getElementById("episode");
  var tip = document.getElementById("tip");

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) {
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      }
    });
    return node;
  }

  function fmt(n) { return typeof n === "number" ? n.toLocaleString("en") : String(n); }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function outcome(v) { return isNum(v) ? (v >= 1 ? "ok" : "fail") : "na"; }
  function said(v) { return { ok: "yes", fail: "no", na: "not judged" }[outcome(v)]; }

  /* ---------------------------------------------------------------- tooltip */
  function place(event) {
    var x = event.clientX + 14, y = event.clientY + 14;
    var box = tip.getBoundingClientRect();
    if (x + box.width > window.innerWidth - 8) x = event.clientX - box.width - 14;
    if (y + box.height > window.innerHeight - 8) y = event.clientY - box.height - 14;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  document.addEventListener("mouseover", function (event) {
    var cell = event.target.closest ? event.target.closest("a.cell") : null;
    if (!cell) return;
    tip.textContent = cell.getAttribute("data-tip");
    tip.hidden = false;
    place(event);
  });
  document.addEventListener("mousemove", function (event) { if (!tip.hidden) place(event); });
  document.addEventListener("mouseout", function (event) {
    var cell = event.target.closest ? event.target.closest("a.cell") : null;
    if (cell && !cell.contains(event.relatedTarget)) tip.hidden = true;
  });

  /* ---------------------------------------------------------------- filters */
  var filters = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
  var gridRows = Array.prototype.slice.call(document.querySelectorAll("table.grid tbody tr"));
  function applyFilters() {
    var want = {};
    filters.forEach(function (f) { want[f.getAttribute("data-filter")] = f.value.trim().toLowerCase(); });
    var shown = 0;
    gridRows.forEach(function (row) {
      var d = row.dataset;
      var outcomes = d.outcomes.split(" ");
      var keep = (!want.set || d.set.toLowerCase() === want.set) &&
        (!want.difficulty || d.difficulty.toLowerCase() === want.difficulty) &&
        (!want.room || d.room.toLowerCase() === want.room) &&
        (!want.text || d.text.indexOf(want.text) >= 0) &&
        (!want.outcome || outcomes.some(function (o) {
          return want.outcome === "err" ? o === "err" : o.indexOf(want.outcome) >= 0;
        }));
      row.hidden = !keep;
      if (keep) shown += 1;
    });
    var count = document.getElementById("shown-count");
    if (count) count.textContent = shown + " of " + gridRows.length + " tasks";
  }
  filters.forEach(function (f) { f.addEventListener("input", applyFilters); });
  applyFilters();

  /* ---------------------------------------------------------------- episode view */
  function violationList(violations) {
    return el("ul", { cls: "violations" }, violations.map(function (v) {
      return el("li", { title: v.literal ? "literal: " + v.literal : "" }, [
        el("span", { cls: "chip code", text: v.code }), " ",
        (isNum(v.step) ? "step " + (v.step + 1) + " (" + v.step_text + "): " : ""), v.message]);
    }));
  }

  function stepList(steps, violations) {
    var refused = {};
    (violations || []).forEach(function (v) { refused[v.step] = true; });
    return el("ol", { cls: "steps" }, steps.map(function (s, i) {
      return el("li", { cls: refused[i] ? "refused" : "", text: s + (refused[i] ? "   ← refused" : "") });
    }));
  }

  function head(kind, extra, nums) {
    return el("div", { cls: "ev-head" }, [el("span", { cls: "kind", text: kind })].concat(extra || [])
      .concat([nums ? el("span", { cls: "nums", text: nums }) : null]));
  }

  function callItem(ev) {
    var li = el("li", { cls: "call" + (ev.error ? " bad" : "") }, [
      head("LLM call #" + ev.n, [el("span", { cls: "chip", text: ev.role || "call" })],
        fmt(ev.prompt_tokens) + " → " + fmt(ev.output_tokens) + " tokens · " + ev.seconds + " s")]);
    if (ev.error) li.appendChild(el("div", { cls: "world", text: "failed: " + ev.error }));
    if (ev.feedback) {
      li.classList.add("refusals");
      li.appendChild(el("div", { cls: "feedback" }, [
        el("div", { cls: "label", text: "Gate feedback sent to the model" }),
        el("pre", { text: ev.feedback })]));
    }
    if (ev.omitted) {
      li.appendChild(el("div", { cls: "muted", text: ev.omitted }));
      return li;
    }
    var prompt = el("details", {}, [el("summary", { text: "Prompt (" + ev.messages.length + " messages)" })]);
    ev.messages.forEach(function (m) {
      prompt.appendChild(el("div", { cls: "msg-role", text: m.role }));
      prompt.appendChild(el("pre", { text: m.content }));
    });
    li.appendChild(prompt);
    li.appendChild(el("details", {}, [el("summary", { text: "Answer" }),
      el("pre", { text: ev.answer || "(no answer)" })]));
    return li;
  }

  function planItem(ev) {
    var refusedSomewhere = ev.blocks.some(function (b) { return b.rejected.length || b.violations.length; });
    var li = el("li", { cls: "plan" + (ev.blocks.length && !ev.certified ? " bad" : "") }, [
      head(ev.phase === "repair" ? "Repair returned" : "Plan returned",
        [el("span", { cls: "badge " + (ev.certified ? "ok" : "fail"), text: ev.certified ? "certified by the gate" : "not certified" })],
        ev.steps.length + " steps")]);
    if (!ev.blocks.length) li.appendChild(stepList(ev.steps));
    ev.blocks.forEach(function (b, i) {
      var block = el("div", { cls: "block" }, [
        head("Sub-goal " + (i + 1) + ": " + b.subgoal, [el("span", { cls: "chip", text: b.origin }),
          el("span", { cls: "badge " + (b.certified ? "ok" : "fail"), text: b.certified ? "certified" : "uncertified" })],
          b.refines ? b.refines + " refine(s)" : "")]);
      b.rejected.forEach(function (attempt, k) {
        block.appendChild(el("div", { cls: "world", text: "Attempt " + (k + 1) + " refused by the gate:" }));
        block.appendChild(stepList(attempt.steps, attempt.violations));
        block.appendChild(violationList(attempt.violations));
      });
      if (b.rejected.length) block.appendChild(el("div", { cls: "world", text: "Kept:" }));
      block.appendChild(stepList(b.steps, b.violations));
      if (b.violations.length) block.appendChild(violationList(b.violations));
      li.appendChild(block);
    });
    if (refusedSomewhere) li.classList.add("refusals");
    if (ev.notes.length) {
      li.appendChild(el("details", {}, [el("summary", { text: "Planner notes (" + ev.notes.length + ")" }),
        el("pre", { text: ev.notes.join("\n") })]));
    }
    return li;
  }

  function verdictItem(ev) {
    var refused = {};
    ev.violations.forEach(function (v) { refused[v.step] = true; });
    var count = Object.keys(refused).length;
    var li = el("li", { cls: "verdict" + (ev.valid ? " gate-ok" : " bad") }, [
      head("Gate check of the plan", [el("span", {
        cls: "badge " + (ev.valid ? "ok" : "fail"),
        text: ev.valid ? "every step accepted" : "refused " + count + " of " + ev.steps.length + " steps" })],
        "goal reached open-loop: " + said(ev.goal_reached === null ? null : ev.goal_reached ? 1 : 0))]);
    li.appendChild(stepList(ev.steps, ev.violations));
    if (ev.violations.length) li.appendChild(violationList(ev.violations));
    if (ev.more_violations) li.appendChild(el("div", { cls: "muted", text: "… " + ev.more_violations + " more violations" }));
    return li;
  }

  var STEP_WORDS = { executed: "executed; the world answered", failed: "failed; the world answered",
    blocked: "blocked by the gate before dispatch", injected: "not sent; the failure was injected" };
  function stepItem(ev) {
    var bad = ev.status !== "executed";
    var li = el("li", { cls: "step " + ev.status + (bad ? " bad" : "") }, [
      head("Step " + (ev.index + 1), [el("span", { cls: "chip " + ev.status, text: ev.status }),
        el("code", { text: ev.step })], null)]);
    li.appendChild(el("div", { cls: "world" }, [
      el("span", { cls: "muted", text: (STEP_WORDS[ev.status] || ev.status) + (ev.message ? ": " : "") }),
      ev.message || "", ev.code ? " " : "", ev.code ? el("span", { cls: "chip code", text: ev.code }) : null]));
    return li;
  }

  function endItem(trace) {
    var goal = trace.end.goal || [];
    var met = goal.filter(function (g) { return g.met; }).length;
    var li = el("li", { cls: "end" }, [head("At the end", [], goal.length ? met + " of " + goal.length + " goal conditions met" : "")]);
    li.appendChild(el("ul", { cls: "goal" }, goal.map(function (g) {
      return el("li", { title: g.pddl }, [el("span", { cls: "mark " + (g.met ? "met" : "unmet"), text: g.met ? "✓" : "✗" }), g.text]);
    })));
    return li;
  }

  function badge(label, value) {
    return el("span", { cls: "badge " + outcome(value) }, [label + ": " + said(value)]);
  }

  function render(name, data) {
    var row = data.row, trace = data.trace, views = data.views;
    view.textContent = "";
    var title = row.task_id + " · " + row.planner + " · seed " + row.seed + " · " + row.model;
    view.appendChild(el("div", { cls: "bar" }, [el("a", { href: "#grid", text: "← back to the grid" }),
      el("span", { cls: "title", text: title }), el("span", { cls: "muted", text: row.mode + " mode" })]));
    var body = el("div", { cls: "body" });
    view.appendChild(body);
    var badges = el("div", { cls: "badges" }, [badge("gate", views.gate), badge("world", views.world)]);
    [["gate_goal_conditions", "goal conditions (gate)", true],
      ["sim_goal_conditions", "goal conditions (world)", true],
      ["task_goal_conditions", "goal conditions (world)", true], ["n_steps", "steps"], ["calls", "LLM calls"],
      ["total_tokens", "tokens"], ["repairs", "repairs"], ["blocked", "blocked"]].forEach(function (m) {
      if (isNum(row[m[0]])) {
        badges.appendChild(el("span", { cls: "badge", text: m[1] + ": " + (m[2] ? Math.round(row[m[0]] * 100) + "%" : fmt(row[m[0]])) }));
      }
    });
    if (row.error) badges.appendChild(el("span", { cls: "badge err", text: "error (" + row.error_kind + ")" }));
    body.appendChild(badges);
    if (row.error) body.appendChild(el("div", { cls: "card" }, [el("h3", { text: "Error" }),
      el("pre", { text: row.error + (row.traceback ? "\n\n" + row.traceback : "") })]));
    var task = (trace && trace.task) || {};
    var facts = el("dl", {});
    [["goal", task.goal_words], ["PDDL goal", task.goal], ["goal note", task.goal_note],
      ["task set", task.taskset || row.taskset], ["difficulty", task.difficulty || row.difficulty],
      ["room", task.room || row.room], ["scene", task.scene], ["domain", task.domain || row.domain]].forEach(function (f) {
      if (f[1]) { facts.appendChild(el("dt", { text: f[0] })); facts.appendChild(el("dd", { cls: f[0] === "PDDL goal" ? "mono" : "", text: f[1] })); }
    });
    body.appendChild(el("div", { cls: "card task" }, [el("h3", { text: "Task " + row.task_id }),
      el("p", { cls: "instruction", text: task.instruction || "" }), facts]));
    if (!trace) {
      body.appendChild(el("div", { cls: "card" }, [el("h3", { text: "No trace for this cell" }),
        el("p", { cls: "muted", text: "The run that made this row kept no episode trace (runs made before traces were written); its steps and notes follow." }),
        stepList(row.steps || []), el("pre", { text: (row.notes || []).join("\n") })]));
      return;
    }
    var firstPlan = trace.events.filter(function (e) { return e.kind === "plan"; })[0];
    if (firstPlan && firstPlan.blocks.length) {
      body.appendChild(el("div", { cls: "card" }, [el("h3", { text: "Sub-goals" }),
        el("ol", { cls: "subgoals" }, firstPlan.blocks.map(function (b) {
          return el("li", {}, [b.subgoal + " ", el("span", { cls: "badge " + (b.certified ? "ok" : "fail"), text: b.certified ? "certified" : "uncertified" })]);
        }))]));
    }
    var timeline = el("ol", { cls: "timeline" });
    trace.events.forEach(function (ev) {
      var item = ev.kind === "call" ? callItem(ev) : ev.kind === "plan" ? planItem(ev)
        : ev.kind === "verdict" ? verdictItem(ev) : ev.kind === "step" ? stepItem(ev) : null;
      if (item) timeline.appendChild(item);
    });
    timeline.appendChild(endItem(trace));
    var first = timeline.querySelector("li.bad, li.refusals");
    if (first) {
      first.id = "first-problem";
      var jump = el("button", { type: "button", cls: "jump", id: "jump", text: "↓ jump to the first refused or failed step" });
      jump.addEventListener("click", function () { first.scrollIntoView({ block: "center" }); });
      body.appendChild(jump);
    }
    body.appendChild(el("h3", { text: "Timeline" }));
    body.appendChild(timeline);
  }

  window.SageReport = {
    episode: function (name, data) {
      loaded[name] = data;
      if (current === name) render(name, data);
    }
  };

  function openEpisode(name) {
    current = name;
    view.hidden = false;
    document.body.style.overflow = "hidden";
    tip.hidden = true;
    if (loaded[name]) { render(name, loaded[name]); view.scrollTop = 0; return; }
    view.textContent = "";
    view.appendChild(el("div", { cls: "bar" }, [el("a", { href: "#grid", text: "← back to the grid" }),
      el("span", { cls: "title", text: "loading " + name + " …" })]));
    var script = document.createElement("script");
    script.src = "episodes/" + encodeURIComponent(name) + ".js";
    script.onerror = function () {
      if (current !== name) return;
      view.appendChild(el("div", { cls: "body" }, [el("p", { text: "episodes/" + name + ".js could not be loaded: write the report again (sage-pddl report RUN --html)." })]));
    };
    document.head.appendChild(script);
    view.scrollTop = 0;
  }

  function closeEpisode() {
    current = null;
    view.hidden = true;
    document.body.style.overflow = "";
  }

  function route() {
    var match = /^#ep\/(.+)$/.exec(location.hash);
    if (match) openEpisode(decodeURIComponent(match[1]));
    else if (current !== null) closeEpisode();
  }
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && current !== null) location.hash = "#grid";
  });
  route();
})();
