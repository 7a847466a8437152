// Every page loads this in <head>, before the body is parsed.
(function () {
  "use strict";
  // Marks that scripts run, so buttons only needed without JavaScript can hide.
  document.documentElement.classList.add("js");

  // The Content-Security-Policy refuses inline style attributes, so lengths and colours
  // that come from data (a bar's width, a label's colour) travel as
  // data-vars="--w: 40%; --c: #1a2b3c" and become CSS custom properties here, on every
  // element as it is parsed or swapped in. Only custom properties are set.
  function apply(element) {
    element.getAttribute("data-vars").split(";").forEach(function (declaration) {
      var colon = declaration.indexOf(":");
      var name = declaration.slice(0, colon).trim();
      if (colon > 0 && name.indexOf("--") === 0) {
        element.style.setProperty(name, declaration.slice(colon + 1).trim());
      }
    });
  }
  function scan(node) {
    if (node.nodeType !== 1) { return; }
    if (node.hasAttribute("data-vars")) { apply(node); }
    node.querySelectorAll("[data-vars]").forEach(apply);
  }
  // A box that scrolls sideways (a wide table on a phone) must be reachable by keyboard:
  // it becomes a focusable region named after its table's caption.
  function scrollable() {
    document.querySelectorAll(".table-wrap").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1 && !box.hasAttribute("tabindex")) {
        var caption = box.querySelector("caption");
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", caption ? caption.textContent.trim() : document.title);
      }
    });
  }
  // The header's "Menu" button (under 768 px): opens and closes the links; Escape closes
  // them and gives the focus back to the button.
  function menu(open) {
    var button = document.querySelector(".menu-toggle");
    if (!button) { return; }
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.closest(".topbar").classList.toggle("is-open", open);
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".menu-toggle");
    if (button) {
      menu(button.getAttribute("aria-expanded") !== "true");
    } else if (!(event.target.closest && event.target.closest(".topbar-menu"))) {
      menu(false);
    }
  });
  document.addEventListener("keydown", function (event) {
    var button = document.querySelector(".menu-toggle[aria-expanded=true]");
    if (event.key === "Escape" && button) {
      menu(false);
      button.focus();
    }
  });
  document.addEventListener("DOMContentLoaded", scrollable);
  document.addEventListener("htmx:afterSettle", scrollable);
  window.addEventListener("resize", scrollable);
  new MutationObserver(function (records) {
    records.forEach(function (record) { record.addedNodes.forEach(scan); });
  }).observe(document.documentElement, {childList: true, subtree: true});
})();
