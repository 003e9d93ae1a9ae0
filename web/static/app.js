// The page script: theme toggle, home filters, and the exercise page
// (tabs, splitter, editor, drafts, Run/Submit and live results). Page data
// comes from <script type="application/json" id="page-data">; no inline
// script or handler is used, as the CSP forbids them.
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  // Home: filter rows as the learner types; the form still works without us.
  function initFilters() {
    const form = $("form.filters");
    if (!form) return;
    $$(".nojs", form).forEach((el) => { el.hidden = true; });
    const apply = () => {
      const q = $("#f-q").value.trim().toLowerCase();
      const d = $("#f-difficulty").value;
      const st = $("#f-status").value.replace("-", " ");
      let shown = 0;
      $$("table.exlist tbody tr").forEach((tr) => {
        const ok = (!d || tr.dataset.difficulty === d) && (!st || tr.dataset.status === st) &&
          (!q || tr.dataset.search.toLowerCase().includes(q));
        tr.hidden = !ok;
        if (ok) shown++;
      });
      $("#no-match").hidden = shown > 0;
      const url = new URL(location.href);
      for (const [k, v] of [["q", q], ["difficulty", d], ["status", $("#f-status").value]]) {
        if (v) url.searchParams.set(k, v); else url.searchParams.delete(k);
      }
      history.replaceState(null, "", url);
    };
    form.addEventListener("input", apply);
    form.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
    apply();
  }

  function initTabs(root) {
    const tabs = $$('[role="tab"]', root);
    const select = (tab, focus) => {
      for (const t of tabs) {
        const on = t === tab;
        t.setAttribute("aria-selected", String(on));
        t.tabIndex = on ? 0 : -1;
        document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
      }
      if (focus) tab.focus();
    };
    tabs.forEach((t, i) => {
      t.addEventListener("click", () => select(t));
      t.addEventListener("keydown", (e) => {
        let j = -1;
        if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
        else if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
        else if (e.key === "Home") j = 0;
        else if (e.key === "End") j = tabs.length - 1;
        if (j >= 0) { e.preventDefault(); select(tabs[j], true); }
      });
    });
  }

  function initSplitter() {
    const bar = $("#splitter");
    const box = $("#exercise");
    if (!bar || !box) return;
    const set = (pct) => {
      pct = Math.max(20, Math.min(80, pct));
      box.style.setProperty("--left", pct + "%");
      bar.setAttribute("aria-valuenow", String(Math.round(pct)));
      try { localStorage.setItem("cj-split", String(pct)); } catch (e) {}
    };
    let saved = null;
    try { saved = parseFloat(localStorage.getItem("cj-split")); } catch (e) {}
    if (saved) set(saved);
    bar.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      bar.setPointerCapture(e.pointerId);
      const move = (ev) => {
        const r = box.getBoundingClientRect();
        set(((ev.clientX - r.left) / r.width) * 100);
      };
      const up = () => {
        bar.removeEventListener("pointermove", move);
        bar.removeEventListener("pointerup", up);
      };
      bar.addEventListener("pointermove", move);
      bar.addEventListener("pointerup", up);
    });
    bar.addEventListener("keydown", (e) => {
      const now = parseFloat(bar.getAttribute("aria-valuenow"));
      if (e.key === "ArrowLeft") { e.preventDefault(); set(now - 5); }
      if (e.key === "ArrowRight") { e.preventDefault(); set(now + 5); }
    });
  }

  // The split between the editor and the results, in the right pane.
  function initHSplit() {
    const bar = $("#hsplit");
    const pane = $(".pane.right");
    const ed = $("#editor");
    if (!bar || !pane || !ed) return;
    const set = (pct, keep) => {
      pct = Math.max(20, Math.min(85, pct));
      pane.style.setProperty("--editor", pct + "%");
      bar.setAttribute("aria-valuenow", String(Math.round(pct)));
      if (keep !== false) { try { localStorage.setItem("cj-hsplit", String(pct)); } catch (e) {} }
    };
    let saved = null;
    try { saved = parseFloat(localStorage.getItem("cj-hsplit")); } catch (e) {}
    if (saved) set(saved, false);
    bar.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      bar.setPointerCapture(e.pointerId);
      const move = (ev) => {
        const top = ed.getBoundingClientRect().top;
        const r = pane.getBoundingClientRect();
        set(((ev.clientY - top) / (r.bottom - top)) * 100);
      };
      const up = () => {
        bar.removeEventListener("pointermove", move);
        bar.removeEventListener("pointerup", up);
      };
      bar.addEventListener("pointermove", move);
      bar.addEventListener("pointerup", up);
    });
    bar.addEventListener("keydown", (e) => {
      const now = parseFloat(bar.getAttribute("aria-valuenow"));
      if (e.key === "ArrowUp") { e.preventDefault(); set(now - 5); }
      if (e.key === "ArrowDown") { e.preventDefault(); set(now + 5); }
    });
  }

  // The exercise page.
  function initExercise() {
    const dataEl = $("#page-data");
    if (!dataEl) return;
    const page = JSON.parse(dataEl.textContent);
    initTabs($(".pane.left"));
    initSplitter();
    initHSplit();

    const status = $("#status");
    const results = $("#results");
    const progress = $("#progress");
    const saveState = $("#save-state");
    const buttons = { run: $("#btn-run"), submit: $("#btn-submit") };
    const localKey = "cj-draft-" + page.slug;
    const headers = { "Content-Type": "application/json", "X-CSRF-Token": page.csrf };

    // The server's draft wins unless this browser holds a newer one that
    // never reached it (saved offline, or the tab closed mid-save).
    let code = page.draft;
    try {
      const local = JSON.parse(localStorage.getItem(localKey) || "null");
      if (local && local.unsaved && typeof local.code === "string") code = local.code;
    } catch (e) {}

    let editor;
    const mount = $("#editor");
    if (window.ctrljudgeEditor) {
      mount.textContent = "";
      editor = window.ctrljudgeEditor.create(mount, {
        doc: code,
        label: mount.dataset.label,
        stylesheet: mount.dataset.stylesheet,
        onRun: () => judge("run"),
        onSubmit: () => judge("submit"),
        onChange: scheduleSave,
        onEscape: () => buttons.run.focus(),
      });
    } else {
      // No editor bundle: a plain textarea still lets the learner work.
      const ta = document.createElement("textarea");
      ta.className = "fallback";
      ta.value = code;
      ta.setAttribute("aria-label", mount.dataset.label);
      ta.addEventListener("input", () => scheduleSave(ta.value));
      mount.textContent = "";
      mount.appendChild(ta);
      editor = { getCode: () => ta.value, setCode: (c) => { ta.value = c; scheduleSave(c); }, markDiagnostics() {}, focus: () => ta.focus() };
    }
    window.cjEditor = editor; // for tests and the curious

    // Drafts: kept locally at once, sent to the server after a pause.
    let saveTimer = null;
    let lastSaved = page.draft;
    function scheduleSave(c) {
      try { localStorage.setItem(localKey, JSON.stringify({ code: c, unsaved: true })); } catch (e) {}
      saveState.textContent = "Unsaved changes";
      clearTimeout(saveTimer);
      saveTimer = setTimeout(saveDraft, 800);
    }
    // saveDraft sends the draft; keepalive lets it finish as the page goes.
    async function saveDraft(keepalive) {
      clearTimeout(saveTimer);
      const c = editor.getCode();
      if (c === lastSaved) { saveState.textContent = "Saved"; return; }
      try {
        const r = await fetch("/api/exercises/" + page.id + "/draft", {
          method: "PUT", headers, body: JSON.stringify({ code: c }), credentials: "same-origin",
          keepalive: keepalive === true,
        });
        if (!r.ok) {
          let msg = await errorText(r);
          const wait = r.headers.get("Retry-After");
          if (wait) msg += " Try again in " + wait + " s.";
          throw new Error(msg);
        }
        lastSaved = c;
        if (r.status !== 204) {
          // Not kept by the server (no learner yet): the local copy stays
          // marked unsaved, so it wins over the starter after a reload.
          const note = (await r.json().catch(() => ({}))).note || "not on the server yet";
          if (editor.getCode() === c) saveState.textContent = "Saved in this browser (" + note + ")";
          return;
        }
        if (editor.getCode() === c) {
          try { localStorage.setItem(localKey, JSON.stringify({ code: c, unsaved: false })); } catch (e) {}
          saveState.textContent = "Saved";
        }
      } catch (e) {
        saveState.textContent = "Saved in this browser only (" + e.message + ")";
      }
    }
    window.addEventListener("pagehide", () => { if (editor.getCode() !== lastSaved) saveDraft(true); });

    $("#btn-reset").addEventListener("click", () => {
      if (!confirm("Put the starter code back? Your current code will be replaced.")) return;
      editor.setCode(page.starter);
      editor.markDiagnostics([]);
      editor.focus();
    });
    $("#btn-download").addEventListener("click", () => {
      const blob = new Blob([editor.getCode()], { type: "text/x-go" });
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = page.fileName;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
    buttons.run.addEventListener("click", () => judge("run"));
    buttons.submit.addEventListener("click", () => judge("submit"));
    results.addEventListener("click", (e) => {
      const only = e.target.closest("button.run-only");
      if (only) { judge("run", only.dataset.test); return; }
      const jump = e.target.closest("a.jump");
      if (jump) {
        const card = document.getElementById("card-" + jump.dataset.index);
        if (card) {
          e.preventDefault();
          $("details", card).open = true;
          card.scrollIntoView({ block: "start" });
          $("summary", card).focus();
        }
        return;
      }
      const b = e.target.closest("button.goto");
      if (b && editor.view) {
        const doc = editor.view.state.doc;
        const line = doc.line(Math.min(Math.max(parseInt(b.dataset.line, 10) || 1, 1), doc.lines));
        editor.view.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
        editor.focus();
      }
    });

    let busy = false;
    const setBusy = (on) => {
      busy = on;
      buttons.run.disabled = on;
      buttons.submit.disabled = on;
      progress.hidden = !on;
      $("#console").setAttribute("aria-busy", String(on));
    };

    async function judge(mode, only) {
      if (busy) return;
      setBusy(true);
      editor.markDiagnostics([]);
      results.textContent = "";
      status.textContent = only ? "Sending your code (only “" + only + "”)…" :
        mode === "run" ? "Sending your code (sample tests)…" : "Sending your code (all tests)…";
      try {
        const c = editor.getCode();
        const body = { mode, code: c };
        if (only) body.only = only;
        const r = await fetch("/api/exercises/" + page.id + "/submissions", {
          method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin",
        });
        if (!r.ok) {
          let msg = await errorText(r);
          const wait = r.headers.get("Retry-After");
          if (wait) msg += " Try again in " + wait + " s.";
          throw new Error(msg);
        }
        lastSaved = c;
        try { localStorage.setItem(localKey, JSON.stringify({ code: c, unsaved: false })); } catch (e) {}
        saveState.textContent = "Saved";
        const sub = await r.json();
        follow(sub.events);
      } catch (e) {
        status.textContent = "Not sent: " + e.message;
        setBusy(false);
      }
    }

    // follow shows a submission's events until its final one.
    function follow(url) {
      setBusy(true);
      const cards = document.createElement("ol");
      cards.className = "cards";
      results.textContent = "";
      results.appendChild(cards);
      const es = new EventSource(url);
      const data = (e) => JSON.parse(e.data);
      es.addEventListener("queued", (e) => {
        const d = data(e);
        status.textContent = d.position > 1 ? "Queued: " + (d.position - 1) + " ahead of you…" : "Queued: you are next…";
      });
      es.addEventListener("compiling", () => {
        // A judgement starting again (the server restarted) replaces any
        // cards of the interrupted one.
        cards.textContent = "";
        status.textContent = "Compiling…";
      });
      es.addEventListener("running", (e) => {
        const d = data(e);
        status.textContent = "Running test " + d.index + " of " + d.total + ": " + d.name + "…";
        setBar(d.index - 1, d.total);
      });
      es.addEventListener("test", (e) => {
        const d = data(e);
        cards.insertAdjacentHTML("beforeend", d.html); // rendered and escaped by the server
        // Only the first failing card stays open.
        const failed = $$(".card.fail", cards);
        if (failed.length > 1) $("details", failed[failed.length - 1]).open = false;
        setBar(d.index, d.total);
      });
      es.addEventListener("done", (e) => {
        es.close();
        const d = data(e);
        results.innerHTML = d.html; // rendered and escaped by the server
        status.textContent = "Done: " + outcomeLine(d);
        editor.markDiagnostics(d.diagnostics || []);
        setBusy(false);
        refreshHistory();
        if (d.solved) unlockSolution();
      });
      es.addEventListener("retrying", (e) => {
        // The machine was too busy to finish; nothing was counted, and the
        // server judges it again when its line is empty.
        cards.textContent = "";
        setBar(0, 0);
        status.textContent = "The judge was too busy to finish; it will try again shortly (attempt " + data(e).attempt + ")…";
      });
      es.addEventListener("not_judged", (e) => {
        es.close();
        status.textContent = "Not judged: " + data(e).note + ". This attempt does not count.";
        setBusy(false);
        refreshHistory();
      });
      es.onerror = () => {
        if (es.readyState === EventSource.CLOSED) {
          status.textContent = "Lost contact with the server. Reload the page to see your result.";
          setBusy(false);
        } else {
          status.textContent = "Reconnecting…";
        }
      };
    }
    function setBar(done, total) {
      const bar = $(".bar", progress);
      bar.style.width = total ? Math.round((100 * done) / total) + "%" : "0";
    }
    function outcomeLine(d) {
      let s = d.title || d.outcome; // the server words it (judge/verdict)
      if (d.total) s += ", " + d.passed + "/" + d.total + " tests passed";
      return s + ".";
    }
    async function refreshHistory() {
      try {
        const r = await fetch("/exercises/" + page.id + "/history", { credentials: "same-origin" });
        if (r.ok) {
          $("#panel-history").innerHTML = await r.text();
          localTimes($("#panel-history"));
        }
      } catch (e) {}
    }
    // History: an old attempt's result in the results pane, or its code
    // back in the editor.
    $("#panel-history").addEventListener("click", async (e) => {
      const b = e.target.closest("button.attempt-view, button.attempt-restore");
      if (!b || busy) return;
      const restore = b.classList.contains("attempt-restore");
      if (restore && editor.getCode() !== lastSaved && !confirm("Replace the code in the editor with this attempt's? Your current code is not saved yet.")) return;
      try {
        const r = await fetch("/api/submissions/" + b.dataset.id, { credentials: "same-origin" });
        if (!r.ok) throw new Error(await errorText(r));
        const a = await r.json();
        const when = localFormat ? localFormat.format(new Date(a.when)) : a.when;
        $$("#panel-history tr.shown").forEach((tr) => tr.classList.remove("shown"));
        const row = b.closest("tr");
        if (row) row.classList.add("shown");
        if (restore) {
          editor.setCode(a.code);
          editor.markDiagnostics([]);
          status.textContent = "Restored the code of your attempt of " + when + " (" + a.title + "). Run or Submit to judge it again.";
        } else {
          results.innerHTML = a.html; // rendered and escaped by the server
          status.textContent = "Your attempt of " + when + ": " + a.title + ".";
        }
        $("#console").scrollTop = 0;
        if (window.matchMedia("(max-width: 820px)").matches) (restore ? mount : $("#console")).scrollIntoView({ block: "start" });
      } catch (err) {
        status.textContent = "Could not load that attempt: " + err.message;
      }
    });
    async function unlockSolution() {
      try {
        const r = await fetch("/exercises/" + page.id + "/solution", { credentials: "same-origin" });
        if (!r.ok) return;
        $("#panel-solution").innerHTML = await r.text();
        const tab = $("#tab-solution");
        tab.dataset.locked = "false";
        status.textContent += " The solution tab is unlocked.";
      } catch (e) {}
    }
    if (page.pending) follow("/api/submissions/" + page.pending + "/events");
  }

  async function errorText(r) {
    try {
      const j = await r.json();
      if (j && j.error) return j.error;
    } catch (e) {}
    return r.status + " " + r.statusText;
  }

  // Heading anchors: goldmark gives headings ids; a link makes them easy
  // to share.
  function initAnchors() {
    $$(".prose h2[id], .prose h3[id]").forEach((h) => {
      const a = document.createElement("a");
      a.className = "anchor";
      a.href = "#" + h.id;
      a.textContent = "#";
      a.setAttribute("aria-label", "Link to “" + h.textContent + "”");
      h.appendChild(a);
    });
  }

  // Times: the server sends ISO timestamps (and UTC text for pages
  // without script); show them in the learner's own time zone.
  const localFormat = (() => {
    try {
      return new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
    } catch (e) { return null; }
  })();
  const shortFormat = (() => {
    try {
      return new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
    } catch (e) { return null; }
  })();
  function localTimes(root) {
    if (!localFormat) return;
    $$("time[data-local]", root).forEach((t) => {
      const d = new Date(t.getAttribute("datetime"));
      if (isNaN(d)) return;
      t.title = t.textContent;
      t.textContent = (t.dataset.local === "short" && shortFormat ? shortFormat : localFormat).format(d);
    });
  }

  // Copy buttons: any button.copy copies its data-copy.
  function initCopy() {
    document.addEventListener("click", async (e) => {
      const b = e.target.closest("button.copy");
      if (!b) return;
      const text = b.dataset.copy || "";
      let ok = false;
      try {
        await navigator.clipboard.writeText(text);
        ok = true;
      } catch (err) {
        // Without the async clipboard (no secure context): a selection.
        const ta = document.createElement("textarea");
        ta.value = text;
        ta.setAttribute("readonly", "");
        ta.style.position = "fixed";
        ta.style.opacity = "0";
        document.body.appendChild(ta);
        ta.select();
        try { ok = document.execCommand("copy"); } catch (err2) {}
        ta.remove();
      }
      b.textContent = ok ? "Copied" : "Select and copy";
      b.classList.toggle("done", ok);
      setTimeout(() => { b.textContent = "Copy"; b.classList.remove("done"); }, 1600);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    initCopy();
    localTimes();
    initAnchors();
    initFilters();
    initExercise();
  });
})();
