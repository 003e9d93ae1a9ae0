// The instructor pages' script: the theme toggle, times in the browser's
// time zone (due dates are entered and shown in local time, stored in
// UTC), and the join link's copy button. The pages work without it: times
// then read and are entered in UTC, as they say. No inline script or
// handler runs (the CSP forbids them).
"use strict";

(function () {
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const pad = (n) => String(n).padStart(2, "0");
  // The value a datetime-local input takes for d, in local time.
  const localValue = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const zone = () => {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return ""; }
  };
  const zoneName = (d) => {
    try {
      const p = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(d).find((x) => x.type === "timeZoneName");
      if (p) return p.value;
    } catch (e) {}
    return zone();
  };
  const show = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())} ${zoneName(d)}`;

  // <time datetime="…Z" class="local"> shows the time in the browser's zone.
  function initTimes() {
    $$("time.local[datetime]").forEach((el) => {
      const d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      el.title = el.textContent;
      el.textContent = show(d);
    });
    $$(".tz-name").forEach((el) => { el.textContent = zone() || "your browser's time zone"; });
    $$(".tz-utc").forEach((el) => { el.hidden = true; });
    $$(".tz-local").forEach((el) => { el.hidden = false; });
  }

  // Due-date forms: the input shows local time; what is sent is the UTC
  // instant (due_utc) and the zone's name, for the confirmation.
  function initDueForms() {
    $$("form.due-form").forEach((form) => {
      const input = form.querySelector("input[type=datetime-local]");
      const utc = form.querySelector("input[name=due_utc]");
      const tz = form.querySelector("input[name=tz]");
      if (!input || !utc) return;
      const was = input.dataset.utc ? new Date(input.dataset.utc) : null;
      if (was && !isNaN(was)) input.value = localValue(was);
      if (tz) tz.value = zone();
      form.addEventListener("submit", () => {
        const d = input.value ? new Date(input.value) : null; // read as local time
        utc.value = d && !isNaN(d) ? d.toISOString() : "";
      });
    });
  }

  function initCopy() {
    $$("button[data-copy]").forEach((btn) => {
      btn.hidden = false;
      btn.addEventListener("click", async () => {
        const src = document.getElementById(btn.dataset.copy);
        if (!src) return;
        const text = src.value || src.textContent;
        let ok = false;
        try { await navigator.clipboard.writeText(text); ok = true; } catch (e) {
          if (src.select) { src.select(); try { ok = document.execCommand("copy"); } catch (e2) {} }
        }
        const was = btn.textContent;
        btn.textContent = ok ? "Copied" : "Select and copy";
        setTimeout(() => { btn.textContent = was; }, 1600);
      });
    });
  }
  initTimes();
  initDueForms();
  initCopy();
})();
