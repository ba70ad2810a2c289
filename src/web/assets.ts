// The web app's files, bundled from src/web/app.html (its CSS and TypeScript) by Bun's HTML
// import. Inside the compiled binary `bun build --compile` has already bundled, minified and
// embedded them (page.files); from source they are bundled once, on first use, with Bun.build.
// Either way the result is a few in-memory files with content-hashed names, which we serve
// ourselves (own headers, CSP, caching) rather than through Bun.serve's HTML routes: those are
// skipped as soon as any plugin adds an onRequest hook.
import { basename } from "node:path";
import page from "./app.html";

export interface Asset {
  body: Uint8Array<ArrayBuffer>;
  /** The same bytes gzipped once at load: a third of the size for the script. */
  gzip: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

/** A file held in memory with its gzipped copy and ETag (also the API docs page's files). */
export const asset = (body: Uint8Array<ArrayBuffer>, type: string): Asset => ({
  body,
  gzip: Bun.gzipSync(body),
  type,
  etag: etagOf(body),
});
export interface WebAssets {
  /** The app's HTML, its asset URLs rewritten to /assets/<name>. */
  index: Asset;
  /** By file name (chunk-<hash>.js, chunk-<hash>.css). */
  files: Map<string, Asset>;
}

const etagOf = (bytes: Uint8Array<ArrayBuffer>) =>
  `"${new Bun.CryptoHasher("sha256").update(bytes).digest("base64url").slice(0, 22)}"`;

async function collect(): Promise<
  { name: string; type: string; bytes: Uint8Array<ArrayBuffer>; html: boolean }[]
> {
  if (page.files?.length) {
    return Promise.all(
      page.files.map(async (f) => ({
        name: basename(f.path),
        type: f.headers["content-type"],
        bytes: await Bun.file(f.path).bytes(),
        html: f.loader === "html",
      })),
    );
  }
  const out = await Bun.build({ entrypoints: [page.index], minify: true, target: "browser" });
  if (!out.success) throw new AggregateError(out.logs, "the web app failed to bundle");
  return Promise.all(
    out.outputs.map(async (o) => ({
      name: basename(o.path),
      type: o.type,
      bytes: new Uint8Array(await o.arrayBuffer()),
      html: o.path.endsWith(".html"),
    })),
  );
}

async function load(): Promise<WebAssets> {
  const all = await collect();
  const files = new Map<string, Asset>();
  for (const f of all) if (!f.html) files.set(f.name, asset(f.bytes, f.type));
  const htmlFile = all.find((f) => f.html);
  if (!htmlFile) throw new Error("the web app bundle has no HTML");
  // The bundler writes "./chunk-x.js" (from source) or "/chunk-x.js" (compiled): both become
  // /assets/chunk-x.js, so deep links like /app/orgs/acme/runs/… load the same files.
  let html = new TextDecoder().decode(htmlFile.bytes);
  for (const name of files.keys())
    html = html.replace(new RegExp(`"\\.?/${name.replace(/[.]/g, "\\.")}"`, "g"), `"/assets/${name}"`);
  const body = new TextEncoder().encode(html);
  return { index: asset(body, "text/html;charset=utf-8"), files };
}

let loaded: Promise<WebAssets> | null = null;
/** Bundled once per process, on the first request for a page (API-only use pays nothing). */
export function webAssets(): Promise<WebAssets> {
  loaded ??= load().catch((e) => {
    loaded = null;
    throw e;
  });
  return loaded;
}
