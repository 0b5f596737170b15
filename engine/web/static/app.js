// engine serve: the run page follows the run's progress summaries over Server-Sent Events; the runs
// list refreshes and lists runs started after it loaded. Values reach the page through textContent
// only (never as HTML): outputs are untrusted; the run page's figures come server-rendered, escaped.
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
  setField(section, "failed", p.failed);
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
  if (badge && badge.textContent !== p.outcome) {
    badge.textContent = p.outcome;
    badge.className = `badge ${p.status_class}`;
  }
}

// The figures (variants table, forest plot, sections) are server-rendered: while the run moves, the
// page re-fetches that fragment and swaps it in, never two at once, at most once per REDRAW_MS, and
// on a big run (the fragment takes long to build) no sooner than twice its last build after it:
// one open page keeps the server at most a third busy.
const REDRAW_MS = 500;

function figureRefresher(url, id = "report") {
  let wanted = 0, busy = false, next = 0, timer = null;
  async function redraw() {
    timer = null;
    busy = true;
    const started = Date.now();
    try {
      const response = await fetch(url);
      if (response.ok) {
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = doc.getElementById(id), shown = document.getElementById(id);
        if (fresh && shown && Number(fresh.dataset.seq) > Number(shown.dataset.seq)) {
          shown.replaceWith(document.adoptNode(fresh));
          document.body.dataset.reportSeq = fresh.dataset.seq;  // for tests and scripts watching the page
        }
      }
    } finally {
      const took = Date.now() - started;
      next = started + Math.max(REDRAW_MS, took + 2 * took);
      busy = false;
      schedule(wanted);
    }
  }
  function schedule(seq) {
    wanted = Math.max(wanted, seq);
    const shown = Number(document.getElementById(id)?.dataset.seq ?? wanted);
    if (busy || timer !== null || wanted <= shown) return;
    timer = setTimeout(redraw, Math.max(0, next - Date.now()));
  }
  return schedule;
}

function followRun(section) {
  const root = document.body.dataset.root;
  const run = encodeURIComponent(section.dataset.run);
  const grading = new URLSearchParams(window.location.search).get("grading");
  const url = `${root}/runs/${run}/live` + (grading === null ? "" : `?grading=${encodeURIComponent(grading)}`);
  const redraw = figureRefresher(url);
  // the browser resumes with Last-Event-ID by itself after a dropped connection
  const source = new EventSource(`${root}/api/runs/${run}/events?after=${section.dataset.after}`);
  let wasRunning = null;
  source.addEventListener("progress", (message) => {
    const p = JSON.parse(message.data);
    showProgress(section, p);
    document.body.dataset.progressDone = String(p.done);  // for tests and scripts watching the page
    if (wasRunning && p.status !== "running") {
      source.close();
      window.location.reload();  // the final report: the stored one, with every section
    }
    wasRunning = p.status === "running";
    if (wasRunning) redraw(p.seq);
  });
}

// The matrix of a live run follows it as the run page does: each progress summary that says the run
// moved re-fetches this very view (its filters, search and page kept) and swaps its table in; the
// run's end fetches it once more and stops.
function followMatrix(holder) {
  const root = document.body.dataset.root;
  const run = encodeURIComponent(holder.dataset.run);
  const redraw = figureRefresher(window.location.href, "matrix-live");
  const source = new EventSource(`${root}/api/runs/${run}/events?after=${holder.dataset.seq}`);
  source.addEventListener("progress", (message) => {
    const p = JSON.parse(message.data);
    document.body.dataset.progressDone = String(p.done);  // for tests and scripts watching the page
    redraw(p.seq);
    if (p.status !== "running") source.close();
  });
}

// The runs list asks for the runs every RUNS_POLL_MS, live or not (an answer from a quiet store is
// memoised on the server): a run started elsewhere appears without a reload by hand.
const RUNS_POLL_MS = 2000;

async function refreshRuns(holder) {
  const root = document.body.dataset.root;
  const response = await fetch(`${root}/api/runs`);
  const runs = await response.json();
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  for (const row of holder.querySelectorAll("tbody tr")) {
    const run = byId.get(row.cells[0].textContent);
    if (!run) continue;
    const badge = row.cells[2].querySelector(".badge");
    badge.textContent = run.outcome;
    badge.className = `badge ${run.status_class}`;
    row.cells[4].textContent = run.pass_rate === null ? "-" : `${(run.pass_rate * 100).toFixed(1)}%`;
  }
  // a run started after the page loaded: the page reloads to list it (the server renders the rows)
  if (runs.length !== holder.querySelectorAll("tbody tr").length) window.location.reload();
  else setTimeout(() => refreshRuns(holder), RUNS_POLL_MS);
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
  const matrix = document.getElementById("matrix-live");
  if (matrix && matrix.dataset.live === "1") followMatrix(matrix);
  const runs = document.getElementById("runs");
  if (runs) setTimeout(() => refreshRuns(runs), RUNS_POLL_MS);
  document.body.dataset.keys = "1";  // the keys are bound
});
