// Validates every JSON answer against the OpenAPI document the server itself serves: the
// operation is found by method and path template, the schema by status (a `$ref` to
// components.responses followed), and Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) judges.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
type Json = any;
type Validate = ((v: unknown) => boolean) & { errors?: unknown };
const ROOT = "https://assay.invalid/openapi.json";

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

export function schemaChecker(doc: Record<string, Json>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: ROOT });
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
