// The board: drag a card (or pick its status) to move it, counts, and quick creation.
(function () {
  "use strict";
  var errorBox = document.getElementById("board-error");
  var announcer = document.getElementById("board-status");
  // Translated texts travel on the board itself (no inline script to write them into).
  function text(name) { return document.getElementById("board-columns").dataset[name]; }

  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRF-TOKEN"]; } catch (e) { return ""; }
  }
  function recount() {
    document.querySelectorAll("#board-columns .board-cards").forEach(function (list) {
      var badge = document.querySelector('[data-count-for="' + list.dataset.statusId + '"]');
      if (badge) { badge.textContent = list.querySelectorAll(".issue-card").length; }
    });
  }
  function columnName(statusId) {
    var head = document.getElementById("col-h-" + statusId);
    return head ? head.textContent.trim() : "";
  }
  // Where the card now sits in its column, as the server keeps it: right above the card below
  // it, or right below the card above it when it is last.
  function placement(card) {
    var next = card.nextElementSibling, prev = card.previousElementSibling;
    while (next && !next.classList.contains("issue-card")) { next = next.nextElementSibling; }
    while (prev && !prev.classList.contains("issue-card")) { prev = prev.previousElementSibling; }
    if (next) { return {before_id: next.dataset.id}; }
    if (prev) { return {after_id: prev.dataset.id}; }
    return {};
  }
  // POST the new status and/or place; resolve with the server's card, reject with its message.
  function move(card, fields) {
    var body = new FormData();
    Object.keys(fields).forEach(function (name) { body.append(name, fields[name]); });
    card.classList.add("pending");
    return fetch(card.dataset.move, {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"X-CSRF-TOKEN": csrf(), "HX-Request": "true"}
    }).then(function (response) {
      return response.text().then(function (text) {
        card.classList.remove("pending");
        if (!response.ok) {
          var holder = document.createElement("div");
          holder.innerHTML = text;
          throw new Error(holder.textContent.trim() || text("failText"));
        }
        return text;
      });
    }, function () { card.classList.remove("pending"); throw new Error(text("failText")); });
  }
  function replaceCard(card, html) {
    var holder = document.createElement("template");
    holder.innerHTML = html.trim();
    var fresh = holder.content.firstElementChild;
    card.replaceWith(fresh);
    return fresh;
  }
  function done(fresh) {
    errorBox.innerHTML = "";
    recount();
    announcer.textContent = text("movedText").replace("{key}", fresh.dataset.key).replace("{status}", columnName(fresh.dataset.statusId));
  }
  function fail(message) {
    errorBox.innerHTML = "";
    var p = document.createElement("p");
    p.className = "alert error"; p.setAttribute("role", "alert"); p.textContent = message;
    errorBox.appendChild(p);
    recount();
  }
  function init() {
    var board = document.getElementById("board-columns");
    if (!board || board.dataset.writable !== "true" || typeof Sortable === "undefined") { return; }
    board.querySelectorAll(".board-cards").forEach(function (list) {
      if (Sortable.get(list)) { return; }
      Sortable.create(list, {
        group: "board", animation: 120, delay: 150, delayOnTouchOnly: true,
        filter: "select, input, button", preventOnFilter: false, ghostClass: "dragging",
        onEnd: function (evt) {
          if (evt.from === evt.to && evt.oldIndex === evt.newIndex) { return; }
          var card = evt.item, from = evt.from, oldIndex = evt.oldIndex;
          var fields = placement(card);
          if (evt.from !== evt.to) { fields.status_id = evt.to.dataset.statusId; }
          if (!Object.keys(fields).length) { return; }
          move(card, fields).then(function (html) {
            done(replaceCard(card, html));
          }, function (error) {
            // Refused: the card goes back where it was.
            from.insertBefore(card, from.children[oldIndex] || null);
            fail(error.message);
          });
        }
      });
    });
  }
  // The keyboard alternative: each card's status select moves it to that column.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches(".card-status select")) { return; }
    var card = select.closest(".issue-card");
    var target = document.getElementById("cards-" + select.value);
    // It goes to the top of its new column, there and after a reload.
    var fields = {status_id: select.value};
    var first = target ? target.querySelector(".issue-card") : null;
    if (first && first !== card) { fields.before_id = first.dataset.id; }
    move(card, fields).then(function (html) {
      var fresh = replaceCard(card, html);
      if (target) { target.insertBefore(fresh, target.firstChild); }
      var again = fresh.querySelector(".card-status select");
      if (again) { again.focus(); }
      done(fresh);
    }, function (error) {
      select.value = select.dataset.current;
      fail(error.message);
    });
  });
  // Alt+← / Alt+→ on a card's link moves it to the top of the column before or after.
  document.addEventListener("keydown", function (event) {
    if (!event.altKey || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) { return; }
    var card = event.target.closest && event.target.closest("#board-columns .issue-card");
    var board = document.getElementById("board-columns");
    if (!card || !board || board.dataset.writable !== "true") { return; }
    var lists = Array.prototype.slice.call(board.querySelectorAll(".board-cards"));
    var target = lists[lists.indexOf(card.parentNode) + (event.key === "ArrowLeft" ? -1 : 1)];
    if (!target) { return; }
    event.preventDefault();
    var fields = {status_id: target.dataset.statusId};
    var first = target.querySelector(".issue-card");
    if (first) { fields.before_id = first.dataset.id; }
    move(card, fields).then(function (html) {
      var fresh = replaceCard(card, html);
      target.insertBefore(fresh, target.firstChild);
      var link = fresh.querySelector(".issue-card-title");
      if (link) { link.focus(); }
      done(fresh);
    }, function (error) { fail(error.message); });
  });
  // Alt+↑ / Alt+↓ on a card's link moves it one place up or down in its column.
  document.addEventListener("keydown", function (event) {
    if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) { return; }
    var card = event.target.closest && event.target.closest("#board-columns .issue-card");
    var board = document.getElementById("board-columns");
    if (!card || !board || board.dataset.writable !== "true") { return; }
    var up = event.key === "ArrowUp";
    var sibling = up ? card.previousElementSibling : card.nextElementSibling;
    if (!sibling || !sibling.classList.contains("issue-card")) { return; }
    event.preventDefault();
    var list = card.parentNode, oldNext = card.nextElementSibling;
    list.insertBefore(card, up ? sibling : sibling.nextElementSibling);
    var fields = up ? {before_id: sibling.dataset.id} : {after_id: sibling.dataset.id};
    move(card, fields).then(function (html) {
      var fresh = replaceCard(card, html);
      var link = fresh.querySelector(".issue-card-title");
      if (link) { link.focus(); }
      done(fresh);
    }, function (error) {
      list.insertBefore(card, oldNext);
      fail(error.message);
    });
  });
  // A quick-create form that succeeded is emptied for the next issue.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (!form.matches || !form.matches("form.quick-create") || event.detail.xhr.status >= 300) { return; }
    form.reset();
    form.querySelector(".form-error").textContent = "";
  });
  document.addEventListener("htmx:afterSettle", function () { init(); recount(); });
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
