// The platform statistics' charts, from each canvas's data-chart; the table stays below them.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  if (typeof Chart === "undefined") { return; }
  var palette = ["#0f766e", "#175cd3", "#b54708", "#b42318", "#7a5af8", "#067647", "#5f6b7a"];
  document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    var spec = JSON.parse(canvas.dataset.chart);
    new Chart(canvas, {
      type: spec.kind,
      data: {labels: spec.labels, datasets: [{data: spec.values, backgroundColor: palette.slice(0, spec.values.length)}]},
      options: {responsive: true, maintainAspectRatio: false, animation: false,
                plugins: {legend: {display: spec.kind !== "bar", position: "bottom"}},
                scales: spec.kind === "bar" ? {y: {beginAtZero: true, ticks: {precision: 0}}} : {}}
    });
  });
});
