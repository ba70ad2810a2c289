// SQL for the org's stored JSON Schemas. A duplicate URI in an org becomes 409 here.
import { audit } from "../audit/append.ts";
import { digestOf } from "../audit/changes.ts";
import type { Actor } from "../audit/types.ts";
import { type Db, type Program, all, count, get, run } from "../db/program.ts";
import { now, parseJson, uniqueOr } from "../db/util.ts";

interface SchemaRow {
  id: number;
  org_id: number;
  uri: string;
  schema: string;
  created_at: string;
  updated_at: string;
}

export interface OrgSchema extends Omit<SchemaRow, "schema"> {
  schema: Record<string, unknown>;
}

/** A list entry: the schema body (up to 1 MiB) is read only by id. */
export type SchemaSummary = Omit<OrgSchema, "schema">;

const toSchema = (r: SchemaRow): OrgSchema => ({ ...r, schema: parseJson(r.schema, {}) });
const duplicate = (uri: string) => `The organization already stores a schema with the URI "${uri}".`;
/** SQLite's default bound on host parameters is far above this; a lookup is done in chunks. */
const CHUNK = 500;

/** The audit log keeps a stored schema's URI and the digest of its text (up to 1 MiB), not the text. */
const record = (r: SchemaRow) => ({ uri: r.uri, schema: digestOf(r.schema) });
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
    ): Promise<{ count: number; items: SchemaSummary[] }> {
      return db.exec(
        (function* () {
          const n = yield* count("SELECT count(*) AS n FROM org_schemas WHERE org_id = ?", orgId);
          const items = yield* all<SchemaSummary>(
            "SELECT id, org_id, uri, created_at, updated_at FROM org_schemas WHERE org_id = CAST(? AS INTEGER) ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
            orgId,
            limit,
            offset,
          );
          return { count: n, items };
        })(),
      );
    },
    /** The org's schemas with these URIs, keyed by URI (URIs it does not store are absent). */
    async byUris(orgId: number, uris: string[]): Promise<Record<string, Record<string, unknown>>> {
      return db.exec(
        (function* () {
          const out: Record<string, Record<string, unknown>> = {};
          for (let i = 0; i < uris.length; i += CHUNK) {
            const part = uris.slice(i, i + CHUNK);
            const rows = yield* all<SchemaRow>(
              `SELECT * FROM org_schemas WHERE org_id = ? AND uri IN (${part.map(() => "?").join(", ")})`,
              orgId,
              ...part,
            );
            for (const r of rows) out[r.uri] = toSchema(r).schema;
          }
          return out;
        })(),
      );
    },
    async create(
      orgId: number,
      uri: string,
      schema: Record<string, unknown>,
      actor: Actor,
    ): Promise<OrgSchema> {
      const ts = now();
      const row = await db.tx(function* () {
        const r = (yield* uniqueOr(
          get<SchemaRow>(
            "INSERT INTO org_schemas (org_id, uri, schema, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *",
            orgId,
            uri,
            JSON.stringify(schema),
            ts,
            ts,
          ),
          duplicate(uri),
          "uri",
        ))!;
        yield* logged(actor, "schema.create", r, null, r);
        return r;
      });
      return toSchema(row);
    },
    async update(
      orgId: number,
      id: number,
      uri: string,
      schema: Record<string, unknown>,
      actor: Actor,
    ): Promise<OrgSchema | null> {
      const row = await db.tx(function* () {
        const before = yield* get<SchemaRow>(
          "SELECT * FROM org_schemas WHERE org_id = ? AND id = ?",
          orgId,
          id,
        );
        if (!before) return null;
        const r = (yield* uniqueOr(
          get<SchemaRow>(
            "UPDATE org_schemas SET uri = ?, schema = ?, updated_at = ? WHERE org_id = ? AND id = ? RETURNING *",
            uri,
            JSON.stringify(schema),
            now(),
            orgId,
            id,
          ),
          duplicate(uri),
          "uri",
        ))!;
        yield* logged(actor, "schema.update", r, before, r);
        return r;
      });
      return row ? toSchema(row) : null;
    },
    async remove(orgId: number, id: number, actor: Actor): Promise<boolean> {
      return db.tx(function* () {
        const before = yield* get<SchemaRow>(
          "SELECT * FROM org_schemas WHERE org_id = ? AND id = ?",
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
