// /api/docs: Swagger UI over /api/v1/openapi.json, served entirely from the binary. The bundle is
// swagger-ui-dist, pinned in package.json and embedded by `bun build --compile` (imported as
// files); nothing is fetched from a CDN, so the page works on an offline install, and its CSP
// (no outside origin, no inline script) makes sure of it. The files are read on the first visit:
// API-only use pays nothing.
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { type Asset, asset } from "../../web/assets.ts";
import { serve } from "../../web/routes.ts";

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes from script.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
const PAGE_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};

export interface DocsFiles {
  page: Asset;
  files: Map<string, Asset>;
}

const encode = (text: string) => new TextEncoder().encode(text);

/**
 * The page and its files. `prefix` is the path part of ASSAY_BASE_URL ("" at the root): every URL
 * is absolute from there, so /api/docs and /api/docs/ both find the document (a URL relative to
 * the page once resolved to /api/api/v1/openapi.json).
 */
export async function loadDocs(prefix: string): Promise<DocsFiles> {
  const base = `${prefix}/api/docs/assets`;
  const init = `window.ui = SwaggerUIBundle(${JSON.stringify({
    url: `${prefix}/api/v1/openapi.json`,
    dom_id: "#swagger-ui",
    deepLinking: true,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
    validatorUrl: null,
  })});\n`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Assay API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
  const files = new Map<string, Asset>([
    ["swagger-ui-bundle.js", asset(await Bun.file(bundlePath).bytes(), "text/javascript;charset=utf-8")],
    ["swagger-ui.css", asset(await Bun.file(cssPath).bytes(), "text/css;charset=utf-8")],
    ["init.js", asset(encode(init), "text/javascript;charset=utf-8")],
  ]);
  return { page: asset(encode(html), "text/html;charset=utf-8"), files };
}

/** The page, revalidated on each load (ETag → 304). */
export const servePage = (d: DocsFiles, request: Request) => serve(d.page, request, "no-cache", PAGE_HEADERS);

export function serveFile(d: DocsFiles, name: string, request: Request): Response | null {
  const f = d.files.get(name);
  return f ? serve(f, request, "no-cache", { "x-content-type-options": "nosniff" }) : null;
}
