// A link marked data-opens="<dialog id>" loads its content with htmx into the dialog
// and opens it in place (a phone keeps its scroll position instead of jumping to a
// panel far below). Without JavaScript the link opens the detail as a page.
(function () {
  "use strict";
  document.addEventListener("htmx:afterSwap", function (event) {
    var trigger = event.detail.requestConfig && event.detail.requestConfig.elt;
    var id = trigger && trigger.getAttribute("data-opens");
    var dialog = id && document.getElementById(id);
    if (dialog && !dialog.open) {
      dialog.showModal();
    }
  });
  // A tap on the backdrop (outside the dialog's box) closes it too.
  document.addEventListener("click", function (event) {
    var dialog = event.target;
    if (dialog.tagName === "DIALOG" && dialog.open) {
      var box = dialog.getBoundingClientRect();
      if (event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom) {
        dialog.close();
      }
    }
  });
})();
