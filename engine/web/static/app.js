// engine serve: the run page follows the log over Server-Sent Events; the runs list refreshes while a
// run is live. Values reach the page through textContent only (never as HTML): outputs are untrusted.
"use strict";

function setField(root, name, value) {
  const node = root.querySelector(`[data-field="${name}"]`);
  if (node) node.textContent = value;
}

function showProgress(section, p) {
  setField(section, "done", p.done);
  setField(section, "total", p.total);
  setField(section, "rate_per_s", p.rate_per_s);
  setField(section, "eta", p.eta_s === null ? "-" : `${Math.round(p.eta_s)} s`);
  setField(section, "passed", p.passed);
  setField(section, "errors", p.errors);
  const bar = section.querySelector("progress");
  bar.max = p.total || 1;
  bar.value = p.done;
  const list = section.querySelector('[data-field="errors_by_class"]');
  list.replaceChildren(...Object.entries(p.errors_by_class).map(([cls, n]) => {
    const item = document.createElement("li");
    item.textContent = `${cls}: ${n}`;
    return item;
  }));
  if (!list.children.length) list.append(Object.assign(document.createElement("li"), {textContent: "none"}));
  const badge = document.querySelector('[data-field="status"]');
  if (badge && badge.textContent !== p.status) {
    badge.textContent = p.status;
    badge.className = `badge ${p.status}`;
  }
}

function followRun(section) {
  const root = document.body.dataset.root;
  const run = encodeURIComponent(section.dataset.run);
  // the browser resumes with Last-Event-ID by itself after a dropped connection
  const source = new EventSource(`${root}/api/runs/${run}/events?after=${section.dataset.after}`);
  let wasRunning = null;
  source.addEventListener("progress", (message) => {
    const p = JSON.parse(message.data);
    showProgress(section, p);
    document.body.dataset.progressDone = String(p.done);  // for tests and scripts watching the page
    if (wasRunning && p.status !== "running") {
      source.close();
      window.location.reload();  // the final report: variants, forest plot, flaky cases
    }
    wasRunning = p.status === "running";
  });
}

async function refreshRuns(holder) {
  const root = document.body.dataset.root;
  const response = await fetch(`${root}/api/runs`);
  const runs = await response.json();
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  for (const row of holder.querySelectorAll("tbody tr")) {
    const run = byId.get(row.cells[0].textContent);
    if (!run) continue;
    const badge = row.cells[2].querySelector(".badge");
    badge.textContent = run.status;
    badge.className = `badge ${run.status}`;
    row.cells[4].textContent = run.pass_rate === null ? "-" : `${(run.pass_rate * 100).toFixed(1)}%`;
  }
  if (runs.some((r) => r.status === "running") || runs.length !== holder.querySelectorAll("tbody tr").length) {
    if (runs.length !== holder.querySelectorAll("tbody tr").length) window.location.reload();
    else setTimeout(() => refreshRuns(holder), 2000);
  }
}

// Keys on every page: "/" focuses the search, j/k move to the next/previous case of the matrix, Enter
// opens it, Esc closes what is open (expanded outputs, the search box's focus).
function caseRows() {
  return [...document.querySelectorAll("table.matrix tbody tr[data-case]")];
}

function moveCase(step) {
  const rows = caseRows();
  if (!rows.length) return false;
  const at = rows.findIndex((row) => row.classList.contains("kbd-focus"));
  const next = rows[at < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + step))];
  rows.forEach((row) => row.classList.remove("kbd-focus"));
  next.classList.add("kbd-focus");
  next.scrollIntoView({block: "nearest"});
  document.body.dataset.focusCase = next.dataset.case;  // for tests and scripts watching the page
  return true;
}

function closeAll() {
  document.querySelectorAll("details[open]").forEach((d) => d.removeAttribute("open"));
  document.querySelectorAll("tr.kbd-focus").forEach((row) => row.classList.remove("kbd-focus"));
  delete document.body.dataset.focusCase;
}

function onKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement
    || event.target instanceof HTMLSelectElement;
  if (typing) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (document.querySelector(".label-row")) return;  // the labelling panel has its own keys
  const search = document.querySelector('input[type="search"], input[name="q"]');
  const focused = document.querySelector("tr.kbd-focus");
  const actions = {
    "/": () => search && (search.focus(), search.select(), true),
    j: () => moveCase(1),
    k: () => moveCase(-1),
    Enter: () => {
      const link = focused && focused.querySelector("td.case a");
      if (link) window.location.assign(link.href);
      return Boolean(link);
    },
    Escape: () => (closeAll(), true),
  };
  const action = actions[event.key];
  if (action && action()) event.preventDefault();
}

document.addEventListener("keydown", onKey);

document.addEventListener("DOMContentLoaded", () => {
  const section = document.getElementById("progress");
  if (section) followRun(section);
  const runs = document.getElementById("runs");
  if (runs && runs.dataset.live === "1") setTimeout(() => refreshRuns(runs), 2000);
  document.body.dataset.keys = "1";  // the keys are bound
});
