// GET /api/v1/openapi.json and the /api/docs page (unauthenticated: CONTRACT §1). The document is
// built on the first request, when every route is registered, and kept; `servers` names the
// public origin (ASSAY_BASE_URL, else the request's), so a generated client needs no base URL
// from a document downloaded from the server it talks to.
import { Elysia, t } from "elysia";
import type { Config } from "../../config.ts";
import { notFound } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import { publicOrigin } from "../url.ts";
import { type DocsFiles, loadDocs, serveFile, servePage } from "./docs-page.ts";
import { buildDocument } from "./document.ts";

type AnyApp = Parameters<typeof buildDocument>[0];

export function openapiRoutes(config: Config, app: () => AnyApp) {
  let doc: Record<string, unknown> | null = null;
  const texts = new Map<string, string>();
  let docs: Promise<DocsFiles> | null = null;
  const prefix = config.base_url ? new URL(config.base_url).pathname.replace(/\/+$/, "") : "";
  const files = () => {
    docs ??= loadDocs(prefix).catch((e) => {
      docs = null;
      throw e;
    });
    return docs;
  };
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "openapi" })
    .get(
      "/api/v1/openapi.json",
      ({ request }) => {
        doc ??= buildDocument(app(), VERSION);
        const origin = publicOrigin(config.base_url, request);
        let text = texts.get(origin);
        if (text === undefined) {
          const { openapi, info, ...rest } = doc;
          text = JSON.stringify({ openapi, info, servers: [{ url: origin }], ...rest });
          if (texts.size >= 16) texts.clear(); // origins come from Host headers: keep a few
          texts.set(origin, text);
        }
        return new Response(text, { headers: { "content-type": "application/json" } });
      },
      hide,
    )
    .get("/api/docs", async ({ request }) => servePage(await files(), request), hide)
    .get(
      "/api/docs/assets/:name",
      async ({ params, request }) => {
        const r = serveFile(await files(), params.name, request);
        if (!r) throw notFound("File");
        return r;
      },
      { params: t.Object({ name: t.String() }), ...hide },
    );
}
