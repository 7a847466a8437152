// The service worker of remanejamento's Web Push notifications: shows what the server sent
// (JSON {title, body, url}) and opens its page when clicked.
self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (error) {
    data = { title: "Giro", body: event.data.text() };
  }
  event.waitUntil(
    self.registration.showNotification(data.title || "Giro", {
      body: data.body || "",
      icon: "/static/favicon.svg",
      data: { url: data.url || "/" },
    })
  );
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  event.waitUntil(self.clients.openWindow(event.notification.data.url));
});
