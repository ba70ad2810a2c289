// Rules of the org's stored schemas: URI syntax and length, size, meta-validation of a JSON Schema
// (with the json_schema validator's own check, so a stored schema is exactly as valid as an inline
// one), well-formedness and the xs:schema root of an XSD document. An XSD is compiled only when a
// step uses it, with the documents it includes and imports: those may be stored in any order.
import type { Actor } from "../audit/types.ts";
import { type ErrorItem, type Problem, conflict, invalid, notFound } from "../errors.ts";
import {
  charCount,
  jsonHasLoneSurrogate,
  jsonHasOverflow,
  NAME_CHARACTERS,
  NO_LONE_SURROGATES,
  NO_OVERFLOW,
  nameCharactersOk,
} from "../lib/text.ts";
import { draftFromUri } from "../validators/json-schema/drafts.ts";
import { refsInAnyDraft } from "../validators/json-schema/resources.ts";
import { loadLibxml } from "../validators/shared/libxml.ts";
import { MAX_SET_DOCUMENTS } from "../validators/xml-schema/documents.ts";
import type { DraftChecker } from "../workflows/check-thread.ts";
import { checkStoredSchema, checkStoredXsd, type XsdRoot, type XsdWanted } from "./check.ts";
import type { SchemaKind, SchemaStore, SchemaWrite } from "./store.ts";

export const MAX_URI_LENGTH = 500;
export const MAX_SCHEMA_BYTES = 1_048_576;
/** UBL 2.1's aggregate components alone are 2.4 MB. */
export const MAX_XSD_BYTES = 8 * 1_048_576;
/**
 * Stored schemas an organization may have by default (2026-11-29; was unbounded: one author could
 * store XSD documents of 8 MiB each until the disk was full). Room for whole standards' sets (UBL
 * 2.3 is ~90 documents, NIEM ~300, ISO 20022's message catalogue ~800); an operator sets
 * `max_schemas_per_org` (docs/limits.md).
 */
export const MAX_SCHEMAS_PER_ORG = 2000;
const tooManySchemas = (max: number) =>
  conflict(
    `An organization can have at most ${max} stored ${max === 1 ? "schema" : "schemas"}; delete unused ones first.`,
  );
/** Bounds the $ref chase through stored schemas (each round is one query). */
const MAX_ROUNDS = 32;

type Schemas = Record<string, Record<string, unknown>>;

/** The canonical form of an absolute URI without fragment, or an error item. */
function canonicalUri(raw: string): string | ErrorItem {
  const bad = (message: string): ErrorItem => ({ field: "uri", code: "invalid", message });
  if (charCount(raw) > MAX_URI_LENGTH) return bad(`A URI may hold at most ${MAX_URI_LENGTH} characters.`);
  // Before the parse: new URL strips leading and trailing C0 controls and drops TAB and line
  // breaks inside, so "\u0001urn:zz\u001f" was stored as "urn:zz" without a word.
  if (!nameCharactersOk(raw)) return bad(`A URI ${NAME_CHARACTERS}.`);
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

/** The problem of a stored schema's URI (canonicalUri's), for its field in the route schema. */
export function uriProblem(raw: string): Problem | null {
  const uri = canonicalUri(raw);
  return typeof uri === "string" ? null : { code: uri.code, message: uri.message };
}

/** Stored schemas reachable through $ref from `uris`, transitively, keyed by URI. */
export async function storedClosure(store: SchemaStore, orgId: number, uris: string[]): Promise<Schemas> {
  const found: Schemas = {};
  let wanted = [...new Set(uris)];
  for (let round = 0; round < MAX_ROUNDS && wanted.length > 0; round++) {
    const got = await store.byUris(orgId, wanted);
    Object.assign(found, got);
    const next = Object.entries(got).flatMap(([uri, s]) => refsInAnyDraft(s, uri));
    wanted = [...new Set(next)].filter((u) => !(u in found));
  }
  return found;
}

/**
 * The stored XSD documents that the roots' schema sets reach, transitively, by URI: each round
 * asks the store for the locations and namespaces the documents found so far could not answer.
 * `round` parses every document found so far: the check thread's (check-thread.ts, XsdSetWalk;
 * an 8 MB document took 0.68 s), never the HTTP thread's, which does not load libxml2.
 */
export async function storedXsdSet(
  store: SchemaStore,
  orgId: number,
  roots: XsdRoot[],
  round: (roots: XsdRoot[], found: Record<string, string>) => Promise<XsdWanted>,
): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const asked = { uris: new Set<string>(), namespaces: new Set<string>() };
  for (let i = 0; i < MAX_ROUNDS; i++) {
    const wanted = await round(roots, found);
    const uris = wanted.uris.filter((u) => !asked.uris.has(u));
    const namespaces = wanted.namespaces.filter((n) => !asked.namespaces.has(n));
    if ((uris.length === 0 && namespaces.length === 0) || Object.keys(found).length > MAX_SET_DOCUMENTS)
      break;
    for (const u of uris) asked.uris.add(u);
    for (const n of namespaces) asked.namespaces.add(n);
    Object.assign(
      found,
      await store.textsByUris(orgId, "xsd", uris),
      await store.textsByNamespaces(orgId, namespaces),
    );
  }
  return found;
}

interface SchemaBody {
  uri: string;
  kind?: SchemaKind;
  schema: Record<string, unknown> | string;
}

const bodyError = (field: string, code: string, message: string) =>
  invalid("The schema is invalid.", [{ field, code, message }]);

/**
 * An XSD document as stored: well-formed, rooted in xs:schema; its targetNamespace. The parse is
 * the check thread's when there is one (an 8 MB document took 0.68 s).
 */
async function checkXsd(
  text: string,
  uri: string,
  checker?: DraftChecker,
  org?: number,
): Promise<SchemaWrite> {
  if (Buffer.byteLength(text, "utf8") > MAX_XSD_BYTES)
    throw bodyError("schema", "too_large", `An XSD document may hold at most ${MAX_XSD_BYTES} bytes.`);
  let targetNamespace: string;
  if (checker) targetNamespace = await checker.checkStoredXsd(text, uri, org);
  else {
    await loadLibxml();
    targetNamespace = checkStoredXsd(text, uri);
  }
  return { uri, kind: "xsd", targetNamespace, text };
}

/**
 * create and replace take `checker`, where a JSON Schema or an XSD document is checked: the
 * workflow check thread (its compile or parse can take seconds); without one, in place.
 */
/** `maxPerOrg`: stored schemas an org may have (config `max_schemas_per_org`). */
export function createSchemaService(store: SchemaStore, maxPerOrg = MAX_SCHEMAS_PER_ORG) {
  async function check(orgId: number, body: SchemaBody, checker?: DraftChecker): Promise<SchemaWrite> {
    const uri = canonicalUri(body.uri);
    if (typeof uri !== "string") throw invalid("The schema is invalid.", [uri]);
    const kind = body.kind ?? "json_schema";
    // Stored, every read and every step that pins it would repeat it as an escape.
    if (
      typeof body.schema === "string"
        ? !body.schema.isWellFormed()
        : jsonHasLoneSurrogate(JSON.stringify(body.schema) ?? "")
    )
      throw bodyError("schema", "invalid", `A schema ${NO_LONE_SURROGATES}.`);
    if (typeof body.schema !== "string" && jsonHasOverflow(body.schema))
      throw bodyError("schema", "invalid", `A schema ${NO_OVERFLOW}.`);
    if (kind === "xsd") {
      if (typeof body.schema !== "string")
        throw bodyError("schema", "invalid", "An XSD document is given as a string of XML.");
      return checkXsd(body.schema, uri, checker, orgId);
    }
    if (typeof body.schema === "string")
      throw bodyError("schema", "invalid", 'A JSON Schema is a JSON object (for an XSD, give kind "xsd").');
    if (Buffer.byteLength(JSON.stringify(body.schema), "utf8") > MAX_SCHEMA_BYTES)
      throw bodyError("schema", "too_large", `A schema may hold at most ${MAX_SCHEMA_BYTES} bytes of JSON.`);
    // Its $refs may name the org's other stored schemas (store those first), never the network.
    const resources = await storedClosure(store, orgId, refsInAnyDraft(body.schema, uri));
    if (checker) await checker.checkStored(body.schema, resources, uri, orgId);
    else checkStoredSchema(body.schema, resources, uri);
    return { uri, kind, targetNamespace: null, text: JSON.stringify(body.schema) };
  }
  const idOf = (id: string) => (/^\d{1,15}$/.test(id) ? Number(id) : 0);
  return {
    list: store.list,
    async load(orgId: number, id: string) {
      const s = await store.get(orgId, idOf(id));
      if (!s) throw notFound("Schema");
      return s;
    },
    /**
     * 409 once the org has its most stored schemas: the answer a new one's request gets whatever
     * its content, so also before a false If-None-Match (RFC 9110 §13.2.1), as a webhook's.
     */
    async roomFor(orgId: number): Promise<void> {
      if ((await store.count(orgId)) >= maxPerOrg) throw tooManySchemas(maxPerOrg);
    },
    async create(orgId: number, body: SchemaBody, actor: Actor, checker?: DraftChecker) {
      // Before the check, which may compile or parse for seconds; counted again with the insert.
      if ((await store.count(orgId)) >= maxPerOrg) throw tooManySchemas(maxPerOrg);
      const s = await store.create(orgId, await check(orgId, body, checker), actor, maxPerOrg);
      if (!s) throw tooManySchemas(maxPerOrg); // another request took the last place meanwhile
      return s;
    },
    async replace(orgId: number, id: string, body: SchemaBody, actor: Actor, checker?: DraftChecker) {
      if (!(await store.get(orgId, idOf(id)))) throw notFound("Schema");
      const s = await store.update(orgId, idOf(id), await check(orgId, body, checker), actor);
      if (!s) throw notFound("Schema");
      return s;
    },
    async remove(orgId: number, id: string, actor: Actor) {
      if (!(await store.remove(orgId, idOf(id), actor))) throw notFound("Schema");
    },
  };
}
export type SchemaService = ReturnType<typeof createSchemaService>;
