// @mention autocomplete for comment boxes (textarea.mention-input inside an element whose
// data-members lists the organization's people as [{name, email}]). Typing "@" and a few
// letters of a name or address opens a list; arrows move, Enter or Tab picks, Escape closes.
// Picking writes "@address " in place: the server recognises mentions by address.
(function () {
  "use strict";
  var MAX = 8;
  var box = null;      // the open list
  var field = null;    // the textarea it belongs to
  var matches = [];
  var active = 0;
  var counter = 0;

  function members(textarea) {
    var holder = textarea.closest("[data-members]");
    if (!holder) { return []; }
    try { return JSON.parse(holder.getAttribute("data-members")) || []; } catch (e) { return []; }
  }

  // The "@word" being typed just before the caret, or null.
  function query(textarea) {
    var before = textarea.value.slice(0, textarea.selectionStart);
    var match = /(^|[\s(])@([^\s@]*(?:@[^\s]*)?)$/.exec(before);
    return match ? {text: match[2].toLowerCase(), start: before.length - match[2].length - 1} : null;
  }

  function close() {
    if (box) { box.remove(); }
    if (field) {
      field.removeAttribute("aria-activedescendant");
      field.setAttribute("aria-expanded", "false");
    }
    box = null;
    matches = [];
  }

  function highlight() {
    Array.prototype.forEach.call(box.children, function (option, index) {
      option.setAttribute("aria-selected", index === active ? "true" : "false");
    });
    field.setAttribute("aria-activedescendant", box.children[active].id);
  }

  function pick(index) {
    var found = query(field);
    if (!found || !matches[index]) { close(); return; }
    var value = field.value;
    var insert = "@" + matches[index].email + " ";
    field.value = value.slice(0, found.start) + insert + value.slice(field.selectionStart);
    var caret = found.start + insert.length;
    field.setSelectionRange(caret, caret);
    close();
    field.focus();
  }

  function open(textarea, found) {
    var people = members(textarea).filter(function (person) {
      return !found.text || person.name.toLowerCase().indexOf(found.text) !== -1 ||
        person.email.toLowerCase().indexOf(found.text) === 0;
    }).slice(0, MAX);
    if (!people.length) { close(); return; }
    if (!box || field !== textarea) {
      close();
      field = textarea;
      box = document.createElement("ul");
      box.className = "mention-list";
      box.setAttribute("role", "listbox");
      box.id = "mention-list-" + (++counter);
      textarea.setAttribute("aria-controls", box.id);
      textarea.insertAdjacentElement("afterend", box);
    }
    matches = people;
    active = 0;
    box.textContent = "";
    people.forEach(function (person, index) {
      var option = document.createElement("li");
      option.id = box.id + "-" + index;
      option.setAttribute("role", "option");
      option.textContent = person.name + " ";
      var address = document.createElement("span");
      address.className = "muted";
      address.textContent = person.email;
      option.appendChild(address);
      option.addEventListener("mousedown", function (event) {
        event.preventDefault();
        active = index;
        pick(index);
      });
      box.appendChild(option);
    });
    textarea.setAttribute("aria-expanded", "true");
    highlight();
  }

  document.addEventListener("input", function (event) {
    var textarea = event.target;
    if (!textarea.classList || !textarea.classList.contains("mention-input")) { return; }
    textarea.setAttribute("role", "combobox");
    textarea.setAttribute("aria-autocomplete", "list");
    var found = query(textarea);
    if (found) { open(textarea, found); } else { close(); }
  });

  document.addEventListener("keydown", function (event) {
    if (!box || event.target !== field) { return; }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      active = (active + (event.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length;
      highlight();
      event.preventDefault();
    } else if (event.key === "Enter" || event.key === "Tab") {
      pick(active);
      event.preventDefault();
    } else if (event.key === "Escape") {
      close();
      event.preventDefault();
    }
  });

  document.addEventListener("focusout", function (event) {
    if (box && event.target === field) { close(); }
  });
})();
