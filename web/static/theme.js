// Sets the theme before the page paints: the saved choice, else the
// system's. Loaded in <head> on purpose; app.js wires the toggle.
(function () {
  var saved = null;
  try { saved = localStorage.getItem("cj-theme"); } catch (e) {}
  var dark = saved ? saved === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.setAttribute("data-theme", dark ? "dark" : "light");
})();
