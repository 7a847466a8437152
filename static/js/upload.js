// The import form shows how much of the file has been sent (htmx reports the upload's
// progress), then that the server is checking and writing it.
(function () {
  "use strict";
  function parts(form) {
    var box = form.querySelector(".upload-progress");
    return box && {box: box, bar: box.querySelector("progress"), processing: box.querySelector("[data-processing]")};
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var p = event.target.id === "import-form" && parts(event.target);
    if (p) { p.box.hidden = false; p.bar.value = 0; p.processing.hidden = true; }
  });
  document.addEventListener("htmx:xhr:progress", function (event) {
    var p = event.target.id === "import-form" && parts(event.target);
    if (p && event.detail.lengthComputable) {
      p.bar.value = Math.round(100 * event.detail.loaded / event.detail.total);
      if (event.detail.loaded >= event.detail.total) { p.processing.hidden = false; }
    }
  });
})();
