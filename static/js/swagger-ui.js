// Starts Swagger UI with the configuration the page embeds as JSON.
window.addEventListener("load", function () {
  "use strict";
  var config = JSON.parse(document.getElementById("swagger-ui-config").textContent);
  window.ui = window.SwaggerUIBundle(config);
});
