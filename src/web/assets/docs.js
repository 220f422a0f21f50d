/**
 * @module The API reference page's initializer (served as /assets/docs.js, after the Swagger UI
 * bundle): renders /api/openapi.json into #swagger-ui. Its own file, because the page's
 * Content-Security-Policy allows no inline script.
 */
'use strict';

window.addEventListener('load', function () {
  // validatorUrl: null — otherwise Swagger UI shows a badge loaded from an outside validator.
  window.ui = window.SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    // Cookies ride along with "Try it out" (same origin); nothing is stored by the page itself.
    withCredentials: true,
  });
});
