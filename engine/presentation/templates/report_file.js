// The HTML file's own script (inlined: the file opens from file:// with no network). It filters and
// searches the matrix, and opens a cell's trials (prompt, outputs, graders' reasons, the diff against
// the baseline, the agent's transcript as a conversation). Values reach the page through textContent only: outputs are untrusted.
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("file-data").textContent);
  const rows = [...document.querySelectorAll("table.matrix tbody tr[data-case]")];
  const drill = document.getElementById("drill");
  const body = document.getElementById("drill-body");
  const q = document.getElementById("file-q");
  const regex = document.getElementById("file-regex");
  const show = document.getElementById("file-show");

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function haystack(name) {
    const c = data.cases[name] || {cells: {}};
    const parts = [name, c.prompt, c.expected];
    for (const cell of Object.values(c.cells)) {
      for (const t of cell.trials) {
        parts.push(t.output || "", t.error || "", ...t.grades.map((g) => g.reason || ""));
        for (const m of (t.transcript && t.transcript.messages) || []) {
          parts.push(m.content, ...m.calls.map((c) => `${c.name} ${c.arguments}`));
        }
      }
    }
    return parts.join("\n");
  }
  const texts = new Map(rows.map((row) => [row, haystack(row.dataset.case)]));

  function verdicts(row) {
    return [...row.querySelectorAll("td[data-verdict]")].map((td) => td.dataset.verdict);
  }

  // a cell counts its trials that errored and those a grader could not judge (one of three is enough)
  function counted(row, name) {
    return [...row.querySelectorAll("td[data-verdict]")].some((td) => Number(td.dataset[name] || 0) > 0);
  }

  const SHOWS = {
    all: () => true,
    failing: (v) => v.some((x) => x === "fail" || x === "flaky"),
    errors: (v, row) => v.includes("error") || counted(row, "errors"),
    grading_errors: (v, row) => v.includes("grading_error") || counted(row, "gradingErrors"),
    differs: (v) => new Set(v).size > 1,
    flaky: (v) => v.includes("flaky"),
  };

  function matcher() {
    const needle = q.value.trim();
    if (!needle) return () => true;
    if (regex.checked) {
      try {
        const re = new RegExp(needle, "i");
        return (text) => re.test(text);
      } catch (err) {
        return () => false;  // an unfinished pattern matches nothing until it parses
      }
    }
    const lower = needle.toLowerCase();
    return (text) => text.toLowerCase().includes(lower);
  }

  function applyFilters() {
    const hit = matcher();
    const keep = SHOWS[show.value] || SHOWS.all;
    let shown = 0;
    for (const row of rows) {
      const visible = keep(verdicts(row), row) && hit(texts.get(row));
      row.hidden = !visible;
      if (!visible) row.classList.remove("kbd-focus");
      shown += visible;
    }
    document.getElementById("file-count").textContent = String(shown);
  }

  function diffPre(ops, skip) {  // one side of the diff: the base skips "ins", the candidate "del"
    const pre = el("pre", null, "diff");
    for (const [kind, text] of ops) {
      if (kind !== skip) pre.append(kind === "same" ? document.createTextNode(text) : el(kind, text));
    }
    return pre;
  }

  function conversation(transcript) {  // roles, tool calls with their arguments, tool results
    const box = el("div", null, "transcript");
    box.append(el("h4", `Transcript (${transcript.messages.length} messages)`));
    const list = el("ol", null, "conversation");
    for (const m of transcript.messages) {
      const item = el("li", null, `msg ${m.role.replace(/[^a-z_-]/gi, "")}`);
      item.append(el("span", m.role, "role"));
      if (m.answers) item.append(" ", el("span", `result of ${m.answers}`, "answers"));
      if (m.content) item.append(el("pre", m.content));
      for (const c of m.calls) {
        const call = el("div", null, "tool-call");
        call.append(el("span", c.name, "tool-name"));
        if (c.id) call.append(" ", el("code", c.id));
        call.append(el("pre", c.arguments, "arguments"));
        item.append(call);
      }
      list.append(item);
    }
    box.append(list);
    if (transcript.cut) {
      box.append(el("p", `… ${transcript.cut} more characters of transcript (engine serve's trial page has them)`, "note"));
    }
    return box;
  }

  function openDrill(name, variant) {
    const c = data.cases[name];
    const cell = c && c.cells[variant];
    if (!cell) return;
    body.replaceChildren();
    const title = el("h2", `${name} · ${variant} · ${cell.word}`);
    title.id = "drill-title";
    body.append(title, el("h3", "Prompt"), el("pre", c.prompt, "prompt"));
    if (c.expected) body.append(el("h3", "Expected / reference"), el("pre", c.expected, "expected"));
    if (cell.diff) {
      const pair = el("div", null, "diff-pair");
      const left = el("div");
      left.append(el("h3", `${data.baseline} (baseline)`), diffPre(cell.diff, "ins"));
      const right = el("div");
      right.append(el("h3", variant), diffPre(cell.diff, "del"));
      pair.append(left, right);
      body.append(el("h3", "Diff against the baseline (first repeat)"), pair);
    }
    for (const t of cell.trials) {
      const box = el("div", null, "trial");
      box.append(el("h3", `repeat ${t.repeat}: ${t.status}`),
        el("p", `${t.latency_ms} ms · ${t.tokens} tokens · $${t.cost_usd}`, "note"));
      box.append(t.output === null ? el("p", "(no output)", "note") : el("pre", t.output, "out"));
      if (t.cut) box.append(el("p", `… ${t.cut} more characters (engine serve's trial page has them)`, "note"));
      if (t.error) box.append(el("p", t.error, "warn"));
      const grades = el("ul", null, "grades");
      for (const g of t.grades) {
        const verdict = g.error ? `grading error (${g.error})` : g.passed ? "pass" : "fail";
        const score = g.score === null || g.score === undefined ? "" : ` score ${g.score}`;
        grades.append(el("li", `${g.name}: ${verdict}${score}${g.reason ? ` · ${g.reason}` : ""}`));
      }
      box.append(grades);
      if (t.transcript) box.append(conversation(t.transcript));
      body.append(box);
    }
    drill.hidden = false;
    drill.dataset.case = name;
    drill.dataset.variant = variant;
    document.getElementById("drill-close").focus();
  }

  function closeDrill() {
    drill.hidden = true;
    document.querySelectorAll("details[open]").forEach((d) => d.removeAttribute("open"));
  }

  function move(step) {
    const visible = rows.filter((row) => !row.hidden);
    if (!visible.length) return;
    const at = visible.findIndex((row) => row.classList.contains("kbd-focus"));
    const next = visible[at < 0 ? (step > 0 ? 0 : visible.length - 1)
      : Math.min(visible.length - 1, Math.max(0, at + step))];
    rows.forEach((row) => row.classList.remove("kbd-focus"));
    next.classList.add("kbd-focus");
    next.scrollIntoView({block: "nearest"});
  }

  for (const td of document.querySelectorAll("table.matrix td.cell-box[data-variant]")) {
    td.addEventListener("click", (event) => {
      if (event.target.closest("details")) return;  // expanding an output is not opening the cell
      openDrill(td.closest("tr").dataset.case, td.dataset.variant);
    });
  }
  document.getElementById("drill-close").addEventListener("click", closeDrill);
  q.addEventListener("input", applyFilters);
  regex.addEventListener("change", applyFilters);
  show.addEventListener("change", applyFilters);
  document.getElementById("file-filters").addEventListener("submit", (event) => event.preventDefault());

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const t = event.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement) {
      if (event.key === "Escape") t.blur();
      return;
    }
    const focused = document.querySelector("tr.kbd-focus");
    const keys = {
      "/": () => { q.focus(); q.select(); },
      j: () => move(1),
      k: () => move(-1),
      Enter: () => {
        const first = focused && focused.querySelector("td.cell-box[data-variant]");
        if (first) openDrill(focused.dataset.case, first.dataset.variant);
      },
      Escape: closeDrill,
    };
    if (keys[event.key]) {
      event.preventDefault();
      keys[event.key]();
    }
  });
  document.body.dataset.ready = "1";  // for tests and scripts watching the file
})();
