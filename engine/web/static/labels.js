// engine serve: labelling on the trial page. p / f label the repeat in focus (with the note) and go
// to the next unlabelled trial of the queue; n goes there without labelling; j / k move the focus;
// "/" types a note. Values reach the page through textContent only.
"use strict";

(() => {
  const panel = document.getElementById("labelling");
  if (!panel) return;
  const root = document.body.dataset.root;
  const rows = [...panel.querySelectorAll(".label-row")];
  const writable = panel.dataset.writable === "1";
  const note = document.getElementById("label-note");
  const wanted = new URLSearchParams(window.location.search).get("repeat");
  let focus = rows.findIndex((r) => r.dataset.repeat === wanted);
  if (focus < 0) focus = Math.max(0, rows.findIndex((r) => r.querySelector('[data-field="label"]').textContent === "unlabelled"));

  function showFocus() {
    rows.forEach((row, i) => row.classList.toggle("focus", i === focus));
  }

  function showFigures(agreement) {
    panel.querySelector('[data-field="label-count"]').textContent = agreement.labels;
    for (const judge of agreement.judges) {
      const item = [...panel.querySelectorAll("li[data-judge]")].find((li) => li.dataset.judge === judge.grader);
      if (!item) continue;
      const show = (v) => (v === null ? "-" : String(Number(v.toPrecision(3))));
      item.querySelector('[data-field="label-agreement"]').textContent = show(judge.agreement);
      item.querySelector('[data-field="label-kappa"]').textContent = show(judge.kappa);
      item.querySelector('[data-field="label-labelled"]').textContent = judge.labelled;
    }
  }

  function showError(message) {
    const node = panel.querySelector('[data-field="label-error"]');
    node.textContent = message;
    node.hidden = false;
  }

  async function label(row, verdict) {
    if (!writable || !row) return;
    const body = {
      case: row.dataset.case, variant: row.dataset.variant, repeat: Number(row.dataset.repeat),
      verdict, note: note ? note.value : "",
    };
    const response = await fetch(`${root}/api/runs/${encodeURIComponent(panel.dataset.run)}/labels`, {
      method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const data = await response.json();
    if (!response.ok) {
      showError(data.error || `label refused (${response.status})`);
      return;
    }
    const badge = row.querySelector('[data-field="label"]');
    badge.textContent = verdict;
    badge.className = `badge ${verdict}`;
    showFigures(data.agreement);
    document.body.dataset.labelled = String(data.agreement.labels);  // for tests watching the page
    if (data.next) window.location.assign(data.next);
  }

  for (const [i, row] of rows.entries()) {
    row.querySelector(".label-pass")?.addEventListener("click", () => { focus = i; label(row, "pass"); });
    row.querySelector(".label-fail")?.addEventListener("click", () => { focus = i; label(row, "fail"); });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const keys = {
      p: () => label(rows[focus], "pass"),
      f: () => label(rows[focus], "fail"),
      n: () => { if (panel.dataset.next) window.location.assign(panel.dataset.next); },
      j: () => { focus = Math.min(rows.length - 1, focus + 1); showFocus(); },
      k: () => { focus = Math.max(0, focus - 1); showFocus(); },
      "/": () => note?.focus(),
      l: () => panel.scrollIntoView({block: "start"}),  // the panel, however long the outputs above it
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
  showFocus();
  document.body.dataset.labelReady = "1";
})();
