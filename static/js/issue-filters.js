// The issue list's filter menus.
(function () {
  "use strict";
  // Each filter's summary shows how many of its values are on (the form itself is not re-rendered).
  document.addEventListener("change", function (event) {
    var details = event.target.closest && event.target.closest("#issue-filters details.filter");
    if (!details) { return; }
    var count = details.querySelectorAll("input:checked").length;
    var badge = details.querySelector("[data-filter-count]");
    badge.textContent = count;
    badge.hidden = count === 0;
  });
  // Filter menus close on a click elsewhere or on Escape, like any menu.
  document.addEventListener("click", function (event) {
    document.querySelectorAll("details.filter[open]").forEach(function (menu) {
      if (!menu.contains(event.target)) { menu.open = false; }
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    document.querySelectorAll("details.filter[open]").forEach(function (menu) {
      menu.open = false;
      menu.querySelector("summary").focus();
    });
  });
})();
