// The preferences' "Notificações no navegador": turning it on asks the browser's permission
// (only then), subscribes with the instance's VAPID public key and sends the subscription to
// the server; a refusal turns the box off again and says why.
(function () {
  function base64UrlToBytes(text) {
    var padded = (text + "===".slice((text.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  function say(form, text) {
    var status = form.querySelector("[data-push-status]");
    if (status) status.textContent = text;
  }

  function subscribe(form, box) {
    if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
      box.checked = false;
      say(form, box.dataset.unsupported);
      return;
    }
    Notification.requestPermission().then(function (permission) {
      if (permission !== "granted") {
        box.checked = false;
        say(form, box.dataset.denied);
        return null;
      }
      return navigator.serviceWorker
        .register(box.dataset.worker)
        .then(function () { return navigator.serviceWorker.ready; })
        .then(function (registration) {
          // A push service that never answers must not leave the box on forever.
          return Promise.race([
            registration.pushManager.subscribe({
              userVisibleOnly: true,
              applicationServerKey: base64UrlToBytes(box.dataset.key),
            }),
            new Promise(function (_resolve, reject) {
              setTimeout(function () { reject(new Error("timeout")); }, 15000);
            }),
          ]);
        })
        .then(function (subscription) {
          return fetch(box.dataset.endpoint, {
            method: "POST",
            credentials: "same-origin",
            headers: {
              "Content-Type": "application/json",
              "X-CSRF-TOKEN": form.querySelector("input[name=csrf_token]").value,
            },
            body: JSON.stringify(subscription.toJSON()),
          });
        })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          say(form, box.dataset.subscribed);
        });
    }).catch(function () {
      box.checked = false;
      say(form, box.dataset.failed);
    });
  }

  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-push-toggle]") || !box.checked) return;
    subscribe(box.form, box);
  });
})();
