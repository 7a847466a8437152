// Draws every chart whose Chart.js configuration is embedded as JSON; the tables stay as the fallback.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  if (!window.Chart) { return; }
  document.querySelectorAll('script[type="application/json"][data-chart]').forEach(function (node) {
    var canvas = document.getElementById(node.dataset.chart);
    if (!canvas) { return; }
    new window.Chart(canvas, JSON.parse(node.textContent));
    var figure = canvas.closest("figure");
    figure.classList.add("is-drawn");
    var table = figure.querySelector("details.chart-table");
    if (table) { table.open = false; }  // drawn: the table stays one click away
  });
});
