// Validates every JSON answer against the OpenAPI document the server itself serves: the
// operation is found by method and path template, the schema by status (a `$ref` to
// components.responses followed), and Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) judges.
// webhookChecker does the same for the deliveries Assay sends, against the `webhooks` map.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
type Json = any;
type Validate = ((v: unknown) => boolean) & { errors?: unknown };
const ROOT = "https://assay.invalid/openapi.json";

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Ajv holding the whole document, so that any part of it is compiled by its pointer. */
function documentAjv(doc: Record<string, Json>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: ROOT });
  return ajv;
}

export function schemaChecker(doc: Record<string, Json>) {
  const ajv = documentAjv(doc);
  // Templates with fewer parameters first, so /users/me/tokens/ beats a {param} route.
  const routes = Object.keys(doc.paths)
    .map((p) => ({
      template: p,
      params: (p.match(/\{/g) ?? []).length,
      re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    }))
    .sort((a, b) => a.params - b.params);
  const cache = new Map<string, Validate | null>();

  function validatorFor(method: string, path: string, status: number): Validate | null {
    const route = routes.find((r) => r.re.test(path));
    if (!route) throw new Error(`no OpenAPI path for ${method} ${path}`);
    const key = `${method} ${route.template} ${status}`;
    if (cache.has(key)) return cache.get(key)!;
    const op = doc.paths[route.template][method.toLowerCase()];
    if (!op) throw new Error(`no OpenAPI operation for ${key}`);
    let resp = op.responses[String(status)];
    if (!resp) throw new Error(`status ${status} is not declared for ${key}`);
    let base = pointer("paths", route.template, method.toLowerCase(), "responses", String(status));
    if (resp.$ref) {
      base = resp.$ref.slice(2);
      resp = base
        .split("/")
        .reduce((o: Json, k: string) => o[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
    }
    const json = resp.content?.["application/json"];
    const v = json
      ? (ajv.compile({ $ref: `${ROOT}#/${base}/content/application~1json/schema` }) as Validate)
      : null;
    cache.set(key, v);
    return v;
  }

  /** Null when the body fits; else a description of what does not. */
  return (method: string, path: string, status: number, body: unknown): string | null => {
    if (status === 204 || status === 304) return body === null ? null : `a ${status} with a body`;
    const v = validatorFor(method, path, status);
    if (!v) return null;
    if (v(body)) return null;
    return JSON.stringify(v.errors).slice(0, 1500);
  };
}

/**
 * Checks one webhook delivery a receiver got against the `webhooks` entry of the same document:
 * the body against the operation's requestBody schema, the Content-Type against its media type,
 * and each header parameter (required ones present, every one present matching its schema).
 * Returns the problems (none: it fits) and the headers the entry does not name, for the caller to
 * judge (a fetch adds transport headers of its own).
 */
export function webhookChecker(doc: Record<string, Json>) {
  const ajv = documentAjv(doc);
  const resolve = (node: Json): [Json, string | null] =>
    node?.$ref
      ? [
          node.$ref
            .slice(2)
            .split("/")
            .reduce((o: Json, k: string) => o[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc),
          node.$ref.slice(2),
        ]
      : [node, null];
  const cache = new Map<string, Validate>();
  const compile = (at: string) => {
    let v = cache.get(at);
    if (!v) {
      v = ajv.compile({ $ref: `${ROOT}#/${at}` }) as Validate;
      cache.set(at, v);
    }
    return v;
  };
  return (event: string, headers: Headers, body: string): { problems: string[]; undocumented: string[] } => {
    const op = doc.webhooks?.[event]?.post;
    if (!op) return { problems: [`no webhooks entry for ${event}`], undocumented: [] };
    const problems: string[] = [];
    const base = pointer("webhooks", event, "post");
    const media = (headers.get("content-type") ?? "").split(";")[0]!.trim();
    if (!op.requestBody.content[media]) problems.push(`Content-Type ${media} is not in the requestBody`);
    else {
      const v = compile(`${base}/requestBody/content/${pointer(media)}/schema`);
      if (!v(JSON.parse(body))) problems.push(`body: ${JSON.stringify(v.errors).slice(0, 1500)}`);
    }
    const named = new Set(["content-type"]);
    (op.parameters as Json[]).forEach((p: Json, i: number) => {
      const [param, at] = resolve(p);
      if (param.in !== "header") return;
      const name = String(param.name).toLowerCase();
      named.add(name);
      const value = headers.get(name);
      if (value === null) {
        if (param.required) problems.push(`header ${param.name} is required but was not sent`);
        return;
      }
      const v = compile(`${at ?? `${base}/parameters/${i}`}/schema`);
      if (!v(value)) problems.push(`header ${param.name}: ${JSON.stringify(v.errors).slice(0, 500)}`);
    });
    const undocumented = [...headers.keys()].filter((k) => !named.has(k.toLowerCase())).sort();
    return { problems, undocumented };
  };
}
