// The header's links from 768 px up: one row. The links that do not fit move, the least used
// first (the lowest data-fold), into the "Mais" list at the row's end, in the page's order;
// under 768 px every link is back in its place behind the "Menu" button (static/js/giro.js).
// Loaded right after the header, so that the first paint is already folded.
(function () {
  "use strict";
  var list = document.querySelector(".topbar .nav");
  var more = list && list.querySelector(".nav-more");
  if (!more) { return; }
  var topbar = list.closest(".topbar");
  var button = more.querySelector(".nav-more-toggle");
  var folded = more.querySelector(".nav-more-list");
  var account = topbar.querySelector(".user-menu");
  var links = Array.prototype.filter.call(list.children, function (item) { return item !== more; });
  var byPriority = links.filter(function (item) { return item.hasAttribute("data-fold"); })
    .sort(function (a, b) { return Number(a.getAttribute("data-fold")) - Number(b.getAttribute("data-fold")); });
  var phone = window.matchMedia("(max-width: 767px)");

  function open(yes) {
    button.setAttribute("aria-expanded", yes ? "true" : "false");
  }
  // The row is full when the account's menu, pushed to the right, keeps less than its gap to the
  // links plus room for the inbox's count to grow by a digit.
  function overflowing() {
    var gap = parseFloat(window.getComputedStyle(topbar).columnGap) || 0;
    var space = account ? account.getBoundingClientRect().left - list.getBoundingClientRect().right : gap + 12;
    return topbar.scrollWidth > topbar.clientWidth || space < gap + 12;
  }
  function fold() {
    open(false);
    links.forEach(function (item) { list.insertBefore(item, more); });
    more.hidden = true;
    if (phone.matches) { return; }
    for (var i = 0; i < byPriority.length && overflowing(); i += 1) {
      more.hidden = false;
      var item = byPriority[i];
      var next = Array.prototype.find.call(folded.children, function (other) {
        return links.indexOf(other) > links.indexOf(item);
      });
      folded.insertBefore(item, next || null);
    }
  }

  button.addEventListener("click", function () {
    open(button.getAttribute("aria-expanded") !== "true");
  });
  // Escape closes the list and gives the focus back to "Mais"; a click or the focus elsewhere closes it.
  more.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      event.stopPropagation();
      open(false);
      button.focus();
    }
  });
  more.addEventListener("focusout", function (event) {
    if (event.relatedTarget && !more.contains(event.relatedTarget)) { open(false); }
  });
  document.addEventListener("click", function (event) {
    if (!more.contains(event.target)) { open(false); }
  });
  // Only a new width refolds: a tablet's toolbar showing or hiding on scroll leaves the list open.
  var width = window.innerWidth;
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending || window.innerWidth === width) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; width = window.innerWidth; fold(); });
  });
  fold();
})();
