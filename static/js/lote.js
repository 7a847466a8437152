// A batch page: the selection (this page's rows, or everything the filter matches), the
// dialogs, the toast after an action, Escape on a veto form, and the keyboard.
(function () {
  function boxes() { return document.querySelectorAll('input[name="rid"][form="bulk-form"]'); }
  function refresh() {
    var count = document.getElementById('sel-count');
    if (!count) { return; }
    var matching = document.getElementById('select-matching');
    var n = Array.prototype.filter.call(boxes(), function (b) { return b.checked; }).length;
    if (matching && matching.checked) {
      count.textContent = count.dataset.all;
    } else {
      count.textContent = n === 0 ? count.dataset.none : (n === 1 ? count.dataset.one : count.dataset.many.replace('__N__', n));
    }
    var all = document.getElementById('select-all');
    if (all) { all.checked = n > 0 && n === boxes().length; }
    // Nothing selected: the bar's actions are disabled (and the bar hidden on a phone).
    var any = n > 0 || Boolean(matching && matching.checked);
    var bar = document.getElementById('bulk-form');
    if (bar) { bar.classList.toggle('has-selection', any); }
    document.querySelectorAll('#bulk-form [data-needs-selection]').forEach(function (b) { b.disabled = !any; });
  }
  document.addEventListener('DOMContentLoaded', refresh);
  document.addEventListener('change', function (event) {
    var target = event.target;
    var matching = document.getElementById('select-matching');
    if (target.id === 'select-all' || target.id === 'select-matching') {
      boxes().forEach(function (b) { b.checked = target.checked; });
    }
    if (target.id === 'select-all' && !target.checked && matching) { matching.checked = false; }
    // Leaving out one row is no longer "everything matching".
    if (target.name === 'rid' && !target.checked && matching) { matching.checked = false; }
    if (target.id === 'select-all' || target.id === 'select-matching' || target.name === 'rid') { refresh(); }
  });

  // Dialogs: [data-dialog] opens one, [data-close-dialog] closes its own, and a form marked
  // data-closes-dialog closes its dialog once its request went through.
  document.addEventListener('click', function (event) {
    var opener = event.target.closest && event.target.closest('[data-dialog]');
    if (opener) {
      var dialog = document.getElementById(opener.dataset.dialog);
      if (dialog && !dialog.open) { dialog.showModal(); }
      return;
    }
    var closer = event.target.closest && event.target.closest('[data-close-dialog]');
    if (closer && closer.closest('dialog')) { closer.closest('dialog').close(); }
  });
  document.addEventListener('htmx:afterRequest', function (event) {
    var form = event.detail.elt.closest && event.detail.elt.closest('[data-closes-dialog]');
    var dialog = form && form.closest('dialog');
    if (dialog && dialog.open) { dialog.close(); }
  });

  // The toast after a single-row action: "Desfazer" is offered for a few seconds only.
  function arm(toast) {
    if (toast.dataset.armed) { return; }
    toast.dataset.armed = '1';
    window.setTimeout(function () {
      var undo = toast.querySelector('.undo');
      if (undo) { undo.remove(); }
      toast.classList.add('is-done');
    }, 1000 * (parseInt(toast.dataset.expires, 10) || 10));
  }

  // Escape closes an open veto form, as its Cancel button does.
  document.addEventListener('keydown', function (event) {
    if (event.key !== 'Escape') { return; }
    var form = event.target.closest && event.target.closest('.veto-form');
    var cancel = form && form.querySelector('button[hx-get]');
    if (!cancel || !window.htmx) { return; }
    event.preventDefault();
    // Straight through htmx.ajax: works even before htmx has wired the just-swapped button.
    window.htmx.ajax('GET', cancel.getAttribute('hx-get'),
      {source: cancel, target: cancel.getAttribute('hx-target'), swap: 'outerHTML'});
  });

  // Keyboard: j/k move between rows, x selects, a/r/v/e act on the current row, ? helps.
  var KEYS = {a: 'aprovar', r: 'recusar', v: 'vetar', e: 'executar'};
  function rows() { return Array.prototype.slice.call(document.querySelectorAll('#recs tr.rec')); }
  function current() {
    var focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('tr.rec');
    return focused || document.querySelector('#recs tr.rec.is-current');
  }
  function moveTo(row) {
    if (!row) { return; }
    document.querySelectorAll('#recs tr.rec.is-current').forEach(function (r) { r.classList.remove('is-current'); });
    row.classList.add('is-current');
    row.focus({preventScroll: true});
    row.scrollIntoView({block: 'nearest'});
  }
  document.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) { return; }
    var target = event.target;
    if (target.closest && target.closest('input, select, textarea, dialog[open], [contenteditable]')) { return; }
    if (document.querySelector('dialog[open]')) { return; }
    var key = event.key;
    if (key === '?') {
      var help = document.getElementById('help-dialog');
      if (help) { event.preventDefault(); help.showModal(); }
      return;
    }
    var list = rows();
    if (!list.length) { return; }
    var row = current();
    if (key === 'j' || key === 'k') {
      event.preventDefault();
      var at = row ? list.indexOf(row) : -1;
      moveTo(list[Math.max(0, Math.min(list.length - 1, at + (key === 'j' ? 1 : -1)))] || list[0]);
      return;
    }
    if (!row) { return; }
    if (key === 'x') {
      var box = row.querySelector('input[name="rid"]');
      if (box) {
        event.preventDefault();
        box.checked = !box.checked;
        box.dispatchEvent(new Event('change', {bubbles: true}));
      }
      return;
    }
    var button = KEYS[key] && row.querySelector('[data-acao="' + KEYS[key] + '"]');
    if (button) {
      event.preventDefault();
      button.click();
    }
  });

  // A row replaced after an action keeps the keyboard where it was: on that row's next action.
  // The row travels with its own request, so overlapping swaps cannot mix them up.
  document.addEventListener('htmx:beforeRequest', function (event) {
    var row = event.detail.elt.closest && event.detail.elt.closest('tr[id^="rec-"]');
    if (row && event.detail.xhr) { event.detail.xhr.recRow = row.id; }
    var form = event.detail.elt.closest && event.detail.elt.closest('.refuse-form');
    var id = form && form.getAttribute('hx-target');
    if (id && event.detail.xhr) { event.detail.xhr.recRow = id.slice(1); }
  });
  document.addEventListener('htmx:afterSettle', function (event) {
    refresh();
    document.querySelectorAll('.toast[data-expires]').forEach(arm);
    var id = event.detail.xhr && event.detail.xhr.recRow;
    var row = id && document.getElementById(id);
    if (!row || row.contains(document.activeElement) || row.querySelector('[autofocus]')) { return; }
    if (row.classList) { row.classList.add('is-current'); }
    var next = row.querySelector('.rec-actions button, .rec-actions a') || row.querySelector('a, input');
    if (next) { next.focus(); }
  });
})();
