// Starts Swagger UI on the OpenAPI document this server serves. The page's links are relative
// (openapi.json, docs/assets/...), so it also works behind a proxy that mounts the server under a
// prefix. Nothing here reaches another origin: no validator badge, no remote document.
window.addEventListener("load", function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: new URL(root.dataset.document, document.baseURI).href,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    filter: true,
    docExpansion: "list",
    displayRequestDuration: true,
    showExtensions: true,
    validatorUrl: null
  });
});
