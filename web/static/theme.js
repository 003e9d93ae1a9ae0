// Sets the theme before the page paints: the saved choice, else the
// system's. Loaded in <head> on purpose, by the learner's and the
// instructor's pages alike; it also wires their toggle once the page is
// parsed.
(function () {
  var saved = null;
  try { saved = localStorage.getItem("cj-theme"); } catch (e) {}
  var dark = saved ? saved === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.setAttribute("data-theme", dark ? "dark" : "light");

  document.addEventListener("DOMContentLoaded", function () {
    var btn = document.getElementById("theme-toggle");
    if (!btn) return;
    var root = document.documentElement;
    var sync = function () { btn.setAttribute("aria-pressed", String(root.dataset.theme === "dark")); };
    sync();
    btn.addEventListener("click", function () {
      var next = root.dataset.theme === "dark" ? "light" : "dark";
      root.dataset.theme = next;
      try { localStorage.setItem("cj-theme", next); } catch (e) {}
      sync();
    });
  });
})();
