// Rules of the org's stored schemas: URI syntax and length, size, meta-validation (with the
// json_schema validator's own check, so a stored schema is exactly as valid as an inline one).
import type { Actor } from "../audit/types.ts";
import { type ErrorItem, invalid, notFound } from "../errors.ts";
import { checkJsonSchemaConfig } from "../validators/json-schema/index.ts";
import { DEFAULT_DRAFT, draftFromUri } from "../validators/json-schema/drafts.ts";
import { refsOf } from "../validators/json-schema/resources.ts";
import type { SchemaStore } from "./store.ts";

export const MAX_URI_LENGTH = 500;
export const MAX_SCHEMA_BYTES = 1_048_576;
/** Bounds the $ref chase through stored schemas (each round is one query). */
const MAX_ROUNDS = 32;

type Schemas = Record<string, Record<string, unknown>>;

/** The canonical form of an absolute URI without fragment, or an error item. */
function canonicalUri(raw: string): string | ErrorItem {
  const bad = (message: string): ErrorItem => ({ field: "uri", code: "invalid", message });
  if (raw.length > MAX_URI_LENGTH) return bad(`A URI may hold at most ${MAX_URI_LENGTH} characters.`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return bad(
      "Must be an absolute URI, e.g. https://schemas.example.com/address.json or urn:example:address.",
    );
  }
  if (/\s/.test(raw) || u.hash.length > 1)
    return bad("Must be an absolute URI without a fragment or spaces.");
  if (draftFromUri(raw)) return bad("A JSON Schema meta-schema URI cannot be replaced.");
  return u.href.replace(/#$/, "");
}

/** Stored schemas reachable through $ref from `uris`, transitively, keyed by URI. */
export async function storedClosure(store: SchemaStore, orgId: number, uris: string[]): Promise<Schemas> {
  const found: Schemas = {};
  let wanted = [...new Set(uris)];
  for (let round = 0; round < MAX_ROUNDS && wanted.length > 0; round++) {
    const got = await store.byUris(orgId, wanted);
    Object.assign(found, got);
    const next = Object.entries(got).flatMap(([uri, s]) => refsOf(s, DEFAULT_DRAFT, uri));
    wanted = [...new Set(next)].filter((u) => !(u in found));
  }
  return found;
}

/**
 * A stored schema that declares no $schema is read in the draft of each step that references it
 * (and checked in that draft when the step is saved), so here it only has to be valid in one of
 * them: a draft-7 `"$id": "#foo"` is an anchor there, not an error. Issues of 2020-12 otherwise.
 */
function checkStored(schema: Record<string, unknown>, resources: Schemas, uri: string) {
  const issues = checkJsonSchemaConfig({ schema }, { resources, uri });
  if (issues.length === 0 || typeof schema.$schema === "string") return issues;
  const fits = (["2019-09", "7", "6", "4"] as const).some(
    (draft) => checkJsonSchemaConfig({ schema, draft }, { resources, uri }).length === 0,
  );
  return fits ? [] : issues;
}

export function createSchemaService(store: SchemaStore) {
  async function check(orgId: number, body: { uri: string; schema: Record<string, unknown> }) {
    const uri = canonicalUri(body.uri);
    if (typeof uri !== "string") throw invalid("The schema is invalid.", [uri]);
    if (Buffer.byteLength(JSON.stringify(body.schema), "utf8") > MAX_SCHEMA_BYTES)
      throw invalid("The schema is invalid.", [
        {
          field: "schema",
          code: "too_large",
          message: `A schema may hold at most ${MAX_SCHEMA_BYTES} bytes of JSON.`,
        },
      ]);
    // Its $refs may name the org's other stored schemas (store those first), never the network.
    const resources = await storedClosure(store, orgId, refsOf(body.schema, DEFAULT_DRAFT, uri));
    const issues = checkStored(body.schema, resources, uri);
    if (issues.length > 0)
      throw invalid(
        "The schema is invalid.",
        issues.map((i) => ({ field: i.field || "schema", code: i.code, message: i.message })),
      );
    return { uri, schema: body.schema };
  }
  const idOf = (id: string) => (/^\d{1,15}$/.test(id) ? Number(id) : 0);
  return {
    list: store.list,
    async load(orgId: number, id: string) {
      const s = await store.get(orgId, idOf(id));
      if (!s) throw notFound("Schema");
      return s;
    },
    async create(orgId: number, body: { uri: string; schema: Record<string, unknown> }, actor: Actor) {
      const c = await check(orgId, body);
      return store.create(orgId, c.uri, c.schema, actor);
    },
    async replace(
      orgId: number,
      id: string,
      body: { uri: string; schema: Record<string, unknown> },
      actor: Actor,
    ) {
      if (!(await store.get(orgId, idOf(id)))) throw notFound("Schema");
      const c = await check(orgId, body);
      const s = await store.update(orgId, idOf(id), c.uri, c.schema, actor);
      if (!s) throw notFound("Schema");
      return s;
    },
    async remove(orgId: number, id: string, actor: Actor) {
      if (!(await store.remove(orgId, idOf(id), actor))) throw notFound("Schema");
    },
  };
}
export type SchemaService = ReturnType<typeof createSchemaService>;
