// The list's bulk edit: "select all" for the page's issues, and how many are selected.
(function () {
  "use strict";
  function boxes() { return document.querySelectorAll('#bulk-form input[name="keys"]'); }
  function refresh() {
    var count = document.getElementById("bulk-count");
    if (!count) { return; }
    var picked = Array.prototype.filter.call(boxes(), function (box) { return box.checked; }).length;
    count.textContent = picked ? count.dataset.template.replace("{n}", picked) : "";
    var all = document.getElementById("bulk-all");
    if (all) {
      all.checked = picked > 0 && picked === boxes().length;
      all.indeterminate = picked > 0 && picked < boxes().length;
    }
  }
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.id === "bulk-all") {
      boxes().forEach(function (box) { box.checked = target.checked; });
    }
    if (target.id === "bulk-all" || (target.matches && target.matches('#bulk-form input[name="keys"]'))) { refresh(); }
  });
  document.addEventListener("htmx:afterSettle", refresh);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", refresh); } else { refresh(); }
})();
