// Live updates of an open page (#live: the batch table's rows, or the project board): while the
// tab is visible, ask every 4 s what changed since the version the page holds. 204 means
// nothing did; otherwise the changed parts are swapped in through htmx, except what the person
// is working on (a veto being typed, a row's action under way, a card being dragged or moved,
// a new card being typed), which waits for a later round.
(function () {
  "use strict";
  var EVERY = 4000;
  var source, timer = null, inFlight = false, stopped = false;
  var waiting = {};  // rows left alone while in use: id -> their newer HTML
  var lastBoard = null;

  function schedule() {
    window.clearTimeout(timer);
    timer = stopped ? null : window.setTimeout(poll, EVERY);
  }

  function query() {
    var params = new URLSearchParams();
    var form = source.dataset.liveForm && document.querySelector(source.dataset.liveForm);
    if (form) {
      new FormData(form).forEach(function (value, name) { if (value) { params.append(name, value); } });
    }
    if (source.dataset.live === "rows") {
      params.set("desde", source.dataset.liveVersion);
      var ids = Array.prototype.map.call(document.querySelectorAll("#recs tr.rec[id^='rec-']"),
        function (row) { return row.id.slice(4); });
      params.set("ids", ids.join(","));
    } else {
      params.set("since", source.dataset.liveVersion);
    }
    return source.dataset.liveUrl + "?" + params.toString();
  }

  function poll() {
    // Hidden: no timer; becoming visible again asks at once.
    if (stopped || inFlight || document.visibilityState !== "visible") { return; }
    inFlight = true;
    fetch(query(), {credentials: "same-origin", cache: "no-store", headers: {"HX-Request": "true"}})
      .then(function (response) {
        // Signed out, or no longer allowed: stop asking (the next action says why).
        if (response.headers.get("HX-Redirect") || [401, 403, 404].indexOf(response.status) >= 0) {
          stopped = true;
          return;
        }
        if (response.status !== 200) { return; }
        return response.text().then(apply);
      })
      .catch(function () { /* offline for a moment: the next round asks again */ })
      .then(function () { inFlight = false; retryWaiting(); schedule(); });
  }

  function parse(html) {
    var holder = document.createElement("template");
    holder.innerHTML = html;
    return holder.content;
  }

  function apply(html) {
    var fragment = parse(html);
    var done = source.dataset.live === "rows" ? applyRows(fragment) : applyBoard(fragment, html);
    var versioned = fragment.querySelector("[data-live-version]");
    if (done && versioned) { source.dataset.liveVersion = versioned.dataset.liveVersion; }
  }

  // --- the batch table ---------------------------------------------------------------------

  function rowInUse(row) {
    return Boolean(row.querySelector(".veto-form, .htmx-request, [disabled]"));
  }

  function swapRow(id, html, stamp) {
    var row = document.getElementById(id);
    if (!row) { delete waiting[id]; return; }
    // An older state than the one shown (the person's own action answered after): dropped.
    if ((row.dataset.stamp || "") >= stamp) { delete waiting[id]; return; }
    if (rowInUse(row)) { waiting[id] = {html: html, stamp: stamp}; return; }
    delete waiting[id];
    var box = row.querySelector('input[name="rid"]');
    var checked = Boolean(box && box.checked);
    var active = document.activeElement;
    var focusAcao = row.contains(active) ? (active.dataset.acao || "") : null;
    window.htmx.swap(row, html, {swapStyle: "outerHTML"});
    var fresh = document.getElementById(id);
    if (!fresh) { return; }
    var again = fresh.querySelector('input[name="rid"]');
    if (again && checked) { again.checked = true; again.dispatchEvent(new Event("change", {bubbles: true})); }
    if (focusAcao !== null) {
      var target = (focusAcao && fresh.querySelector('[data-acao="' + focusAcao + '"]')) || fresh;
      target.focus({preventScroll: true});
    }
  }

  function applyRows(fragment) {
    fragment.querySelectorAll("tr.rec[id]").forEach(function (row) {
      swapRow(row.id, row.outerHTML, row.dataset.stamp || "");
    });
    ["totais", "fluxo"].forEach(function (id) {
      var fresh = fragment.getElementById ? fragment.getElementById(id) : fragment.querySelector("#" + id);
      if (fresh && document.getElementById(id)) {
        window.htmx.swap("#" + id, fresh.outerHTML, {swapStyle: "outerHTML"});
      }
    });
    return true;
  }

  function retryWaiting() {
    Object.keys(waiting).forEach(function (id) { swapRow(id, waiting[id].html, waiting[id].stamp); });
  }

  // --- the board ---------------------------------------------------------------------------

  function boardInUse(board) {
    if (board.querySelector(".sortable-chosen, .sortable-ghost, .pending")) { return true; }
    var active = document.activeElement;
    if (active && board.contains(active) && active.matches("input, select, textarea")) { return true; }
    return Array.prototype.some.call(board.querySelectorAll("form.quick-create input[name='title']"),
      function (input) { return input.value.trim() !== ""; });
  }

  function applyBoard(fragment, html) {
    var board = document.getElementById("board-columns");
    var fresh = fragment.querySelector("#board-columns");
    if (!board || !fresh) { return true; }
    // In use: the version stays, so the next round brings the board again.
    if (boardInUse(board)) { return false; }
    // Sent again within the overlap: already shown. (The version attribute is the only change.)
    var body = html.replace(/data-live-version="[^"]*"/, "");
    if (body === lastBoard) { return true; }
    lastBoard = body;
    var active = document.activeElement;
    var card = active && board.contains(active) ? active.closest(".issue-card") : null;
    window.htmx.swap(board, fresh.outerHTML, {swapStyle: "outerHTML"});
    var again = card && document.getElementById(card.id);
    var link = again && again.querySelector(".issue-card-title");
    if (link) { link.focus({preventScroll: true}); }
    return true;
  }

  function start() {
    source = document.getElementById("live");
    if (!source || !source.dataset.liveUrl || !window.fetch || !window.htmx) { return; }
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible" && !inFlight) { poll(); }
    });
    schedule();
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
