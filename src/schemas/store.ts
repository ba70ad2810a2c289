// SQL for the org's stored schemas: JSON Schemas (kind json_schema, the body is JSON text) and XSD
// documents (kind xsd, the body is the XML text, with its targetNamespace). A duplicate URI in an
// org becomes 409 here. The text getters are generic on purpose: any validator that references
// stored documents (XSD sets today) reads them by URI, by namespace or by id through them.
import { audit } from "../audit/append.ts";
import { digestOf } from "../audit/changes.ts";
import type { Actor } from "../audit/types.ts";
import { type Db, countedPage, type Program, all, count, forUpdate, get, run } from "../db/program.ts";
import { now, parseJson, uniqueOr } from "../db/util.ts";

export type SchemaKind = "json_schema" | "xsd";

interface SchemaRow {
  id: number;
  org_id: number;
  uri: string;
  kind: SchemaKind;
  target_namespace: string | null;
  schema: string;
  created_at: string;
  updated_at: string;
}

/** A stored schema; `schema` is the parsed JSON Schema, or the XSD's text. */
export interface OrgSchema extends Omit<SchemaRow, "schema"> {
  schema: Record<string, unknown> | string;
}

/** A list entry: the schema body (up to megabytes) is read only by id. */
export type SchemaSummary = Omit<OrgSchema, "schema">;

/** What a new or replaced stored schema holds; `text` is its body as stored. */
export interface SchemaWrite {
  uri: string;
  kind: SchemaKind;
  targetNamespace: string | null;
  text: string;
}

const toSchema = (r: SchemaRow): OrgSchema => ({
  ...r,
  schema: r.kind === "json_schema" ? parseJson(r.schema, {}) : r.schema,
});
const duplicate = (uri: string) => `The organization already stores a schema with the URI "${uri}".`;
/** SQLite's default bound on host parameters is far above this; a lookup is done in chunks. */
const CHUNK = 500;
const SUMMARY = "id, org_id, uri, kind, target_namespace, created_at, updated_at";

/** The audit log keeps a stored schema's URI and the digest of its text (up to 1 MiB), not the text. */
const record = (r: SchemaRow) => ({
  uri: r.uri,
  kind: r.kind,
  target_namespace: r.target_namespace,
  schema: digestOf(r.schema),
});
function* logged(
  actor: Actor,
  action: string,
  r: SchemaRow,
  before: SchemaRow | null,
  after: SchemaRow | null,
): Program<void> {
  yield* audit(actor, {
    action,
    org_id: r.org_id,
    target_type: "schema",
    target_id: r.id,
    target_name: r.uri,
    before: before && record(before),
    after: after && record(after),
  });
}

export function createSchemaStore(db: Db) {
  const lock = forUpdate(db.dialect);
  const countOf = (orgId: number) => count("SELECT count(*) AS n FROM org_schemas WHERE org_id = ?", orgId);
  /** Rows of one kind whose `column` is among `values`, in chunks. */
  function* rowsWhereIn(
    orgId: number,
    kind: SchemaKind,
    column: "uri" | "target_namespace",
    values: string[],
  ): Program<SchemaRow[]> {
    const rows: SchemaRow[] = [];
    for (let i = 0; i < values.length; i += CHUNK) {
      const part = values.slice(i, i + CHUNK);
      rows.push(
        ...(yield* all<SchemaRow>(
          `SELECT * FROM org_schemas WHERE org_id = ? AND kind = ? AND ${column} IN (${part.map(() => "?").join(", ")})`,
          orgId,
          kind,
          ...part,
        )),
      );
    }
    return rows;
  }
  return {
    async get(orgId: number, id: number): Promise<OrgSchema | null> {
      const r = await db.exec(
        get<SchemaRow>("SELECT * FROM org_schemas WHERE org_id = ? AND id = ?", orgId, id),
      );
      return r ? toSchema(r) : null;
    },
    async list(
      orgId: number,
      limit: number,
      offset: number,
      kind?: SchemaKind,
    ): Promise<{ count: number; items: SchemaSummary[] }> {
      const filter = kind ? " AND kind = CAST(? AS TEXT)" : "";
      const args = kind ? [orgId, kind] : [orgId];
      const { count: n, rows } = await countedPage<SchemaSummary>(db, {
        count: `SELECT count(*) AS n FROM org_schemas WHERE org_id = CAST(? AS INTEGER)${filter}`,
        countParams: args,
        page: `SELECT ${SUMMARY} FROM org_schemas WHERE org_id = CAST(? AS INTEGER)${filter} ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [...args, limit, offset],
        order: "p.id",
        key: "id",
      });
      return { count: n, items: rows };
    },
    /** The org's JSON Schemas with these URIs, keyed by URI (URIs it does not store are absent). */
    async byUris(orgId: number, uris: string[]): Promise<Record<string, Record<string, unknown>>> {
      const out: Record<string, Record<string, unknown>> = {};
      for (const r of await db.exec(rowsWhereIn(orgId, "json_schema", "uri", uris)))
        out[r.uri] = toSchema(r).schema as Record<string, unknown>;
      return out;
    },
    /** The text of the org's stored documents of one kind with these URIs, keyed by URI. */
    async textsByUris(orgId: number, kind: SchemaKind, uris: string[]): Promise<Record<string, string>> {
      const rows = await db.exec(rowsWhereIn(orgId, kind, "uri", uris));
      return Object.fromEntries(rows.map((r) => [r.uri, r.schema]));
    },
    /** The text of the org's stored XSDs whose targetNamespace is among these, keyed by URI. */
    async textsByNamespaces(orgId: number, namespaces: string[]): Promise<Record<string, string>> {
      const rows = await db.exec(rowsWhereIn(orgId, "xsd", "target_namespace", namespaces));
      return Object.fromEntries(rows.map((r) => [r.uri, r.schema]));
    },
    async count(orgId: number): Promise<number> {
      return db.exec(countOf(orgId));
    },
    /** Null when the org already has `max` stored schemas (count and insert in one transaction). */
    async create(orgId: number, w: SchemaWrite, actor: Actor, max: number): Promise<OrgSchema | null> {
      const ts = now();
      const row = await db.tx(
        function* () {
          // The org's row, locked (PostgreSQL): two creations racing for the last place cannot both
          // pass the count. The lock a webhook's creation takes; runs' foreign keys do not wait.
          yield* get(
            `SELECT id FROM orgs WHERE id = ?${db.dialect === "postgres" ? " FOR NO KEY UPDATE" : ""}`,
            orgId,
          );
          if ((yield* countOf(orgId)) >= max) return null;
          const r = (yield* uniqueOr(
            get<SchemaRow>(
              "INSERT INTO org_schemas (org_id, uri, kind, target_namespace, schema, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *",
              orgId,
              w.uri,
              w.kind,
              w.targetNamespace,
              w.text,
              ts,
              ts,
            ),
            duplicate(w.uri),
            "uri",
          ))!;
          yield* logged(actor, "schema.create", r, null, r);
          return r;
        },
        { immediate: true },
      );
      return row ? toSchema(row) : null;
    },
    async update(orgId: number, id: number, w: SchemaWrite, actor: Actor): Promise<OrgSchema | null> {
      const row = await db.tx(function* () {
        // Locked (PostgreSQL): a save or deletion at the same time waits, then sees this one's.
        const before = yield* get<SchemaRow>(
          `SELECT * FROM org_schemas WHERE org_id = ? AND id = ?${lock}`,
          orgId,
          id,
        );
        if (!before) return null;
        // The same document again (the web editor's save, a script that PUTs each time) is no
        // change: nothing is written, `updated_at` stays and no entry is logged.
        if (
          before.uri === w.uri &&
          before.kind === w.kind &&
          before.target_namespace === w.targetNamespace &&
          before.schema === w.text
        )
          return before;
        const r = (yield* uniqueOr(
          get<SchemaRow>(
            "UPDATE org_schemas SET uri = ?, kind = ?, target_namespace = ?, schema = ?, updated_at = ? WHERE org_id = ? AND id = ? RETURNING *",
            w.uri,
            w.kind,
            w.targetNamespace,
            w.text,
            now(),
            orgId,
            id,
          ),
          duplicate(w.uri),
          "uri",
        ))!;
        yield* logged(actor, "schema.update", r, before, r);
        return r;
      });
      return row ? toSchema(row) : null;
    },
    async remove(orgId: number, id: number, actor: Actor): Promise<boolean> {
      return db.tx(function* () {
        // Locked (PostgreSQL): two deletions at once are one 204 and one 404, one entry.
        const before = yield* get<SchemaRow>(
          `SELECT * FROM org_schemas WHERE org_id = ? AND id = ?${lock}`,
          orgId,
          id,
        );
        if (!before) return false;
        yield* run("DELETE FROM org_schemas WHERE org_id = ? AND id = ?", orgId, id);
        yield* logged(actor, "schema.delete", before, before, null);
        return true;
      });
    },
  };
}
export type SchemaStore = ReturnType<typeof createSchemaStore>;
