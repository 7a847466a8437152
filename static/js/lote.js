// A batch page: the selection count, Escape on a veto form, and the keyboard after a row is replaced.
(function () {
  function boxes() { return document.querySelectorAll('input[name="rid"][form="bulk-form"]'); }
  function refresh() {
    var count = document.getElementById('sel-count');
    if (!count) { return; }
    var n = Array.prototype.filter.call(boxes(), function (b) { return b.checked; }).length;
    count.textContent = n === 0 ? count.dataset.none : (n === 1 ? count.dataset.one : count.dataset.many.replace('__N__', n));
    var all = document.getElementById('select-all');
    if (all) { all.checked = n > 0 && n === boxes().length; }
  }
  document.addEventListener('change', function (event) {
    if (event.target.id === 'select-all') {
      boxes().forEach(function (b) { b.checked = event.target.checked; });
    }
    if (event.target.id === 'select-all' || event.target.name === 'rid') { refresh(); }
  });
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
  // A row replaced after an action keeps the keyboard where it was: on that row's next action.
  // The row travels with its own request, so overlapping swaps cannot mix them up.
  document.addEventListener('htmx:beforeRequest', function (event) {
    var row = event.detail.elt.closest && event.detail.elt.closest('tr[id^="rec-"]');
    if (row && event.detail.xhr) { event.detail.xhr.recRow = row.id; }
  });
  document.addEventListener('htmx:afterSettle', function (event) {
    refresh();
    var id = event.detail.xhr && event.detail.xhr.recRow;
    var row = id && document.getElementById(id);
    if (!row || row.contains(document.activeElement) || row.querySelector('[autofocus]')) { return; }
    var next = row.querySelector('.rec-actions button') || row.querySelector('a, input');
    if (next) { next.focus(); }
  });
})();
