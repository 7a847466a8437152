// Attachments on the issue page: files chosen in the input, dropped on the attachments panel
// or pasted into the comment box are sent one at a time with XMLHttpRequest, whose upload
// progress fills the panel's bar. The server answers the panel again (its list, or why the
// file was refused), which replaces the old one. Without JavaScript the form posts as usual.
(function () {
  "use strict";
  var queue = [];
  var busy = false;

  function panel() { return document.getElementById("issue-attachments"); }

  function csrf(section) {
    var field = section.querySelector("input[name=csrf_token]");
    return field ? field.value : "";
  }

  function say(section, text) {
    var status = section.querySelector(".attachment-status");
    if (status) { status.textContent = text; }
  }

  function replace(section, html) {
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var fresh = holder.querySelector("#issue-attachments");
    if (!fresh) { return null; }
    section.replaceWith(fresh);
    if (window.htmx) { window.htmx.process(fresh); }
    bind();
    return fresh;
  }

  function send(file, onDone) {
    var section = panel();
    if (!section || !section.dataset.uploadUrl) { return; }
    if (file.size > Number(section.dataset.maxBytes)) {
      say(section, section.dataset.tooLarge);
      next();
      return;
    }
    var bar = section.querySelector(".attachment-progress");
    bar.hidden = false;
    bar.value = 0;
    say(section, section.dataset.sending.replace("{name}", file.name));
    var body = new FormData();
    body.append("file", file, file.name);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", section.dataset.uploadUrl);
    xhr.setRequestHeader("X-CSRF-TOKEN", csrf(section));
    xhr.setRequestHeader("HX-Request", "true");
    xhr.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) { bar.value = Math.round(100 * event.loaded / event.total); }
    });
    xhr.addEventListener("load", function () {
      var fresh = replace(section, xhr.responseText);
      if (!fresh) {
        bar.hidden = true;
        say(section, xhr.status === 413 ? section.dataset.tooLarge : section.dataset.failed);
      } else if (xhr.status < 300 && onDone) {
        onDone(fresh);
      }
      next();
    });
    xhr.addEventListener("error", function () {
      bar.hidden = true;
      say(section, section.dataset.failed);
      next();
    });
    xhr.send(body);
  }

  function next() {
    var item = queue.shift();
    busy = Boolean(item);
    if (item) { send(item.file, item.onDone); }
  }

  function enqueue(files, onDone) {
    Array.prototype.forEach.call(files, function (file) { queue.push({file: file, onDone: onDone}); });
    if (!busy) { next(); }
  }

  // A pasted image becomes a link to the new attachment in the comment being written.
  function linkInto(textarea) {
    return function (fresh) {
      var links = fresh.querySelectorAll(".attachment-name");
      var last = links[links.length - 1];
      if (!last) { return; }
      var text = "[" + last.textContent.trim().replace(/[\[\]]/g, "") + "](" + last.getAttribute("href") + ")";
      var at = textarea.selectionStart;
      textarea.value = textarea.value.slice(0, at) + text + textarea.value.slice(textarea.selectionEnd);
      textarea.selectionStart = textarea.selectionEnd = at + text.length;
    };
  }

  function bind() {
    var section = panel();
    if (!section || !section.dataset.uploadUrl || section.dataset.bound) { return; }
    section.dataset.bound = "1";
    var form = section.querySelector(".attachment-upload");
    var input = form.querySelector("input[type=file]");
    form.querySelector(".attachment-submit").hidden = true;
    input.addEventListener("change", function () {
      enqueue(input.files);
      input.value = "";
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      enqueue(input.files);
    });
    section.addEventListener("dragover", function (event) {
      event.preventDefault();
      section.classList.add("dragging");
    });
    section.addEventListener("dragleave", function () { section.classList.remove("dragging"); });
    section.addEventListener("drop", function (event) {
      event.preventDefault();
      section.classList.remove("dragging");
      if (event.dataTransfer && event.dataTransfer.files.length) { enqueue(event.dataTransfer.files); }
    });
  }

  document.addEventListener("paste", function (event) {
    var target = event.target;
    if (!target || target.id !== "comment-body" || !panel() || !panel().dataset.uploadUrl) { return; }
    var files = event.clipboardData && event.clipboardData.files;
    if (!files || !files.length) { return; }
    event.preventDefault();
    enqueue(files, linkInto(target));
  });
  document.addEventListener("DOMContentLoaded", bind);
  // htmx swapped the panel (a deletion): bind the new one.
  document.addEventListener("htmx:afterSwap", bind);
})();
