// SQL for webhook endpoints. Deliveries (the outbox) and attempts are in outbox-store.ts.
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { type Db, countedPage, type Program, all, count, forUpdate, get, run } from "../db/program.ts";
import { bool, now, parseJson } from "../db/util.ts";

interface WebhookRow {
  id: number;
  org_id: number;
  url: string;
  events: string;
  workflow_slugs: string;
  is_active: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  disabled_reason: string | null;
  disabled_at: string | null;
  failed_streak: number;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export interface Webhook extends Omit<WebhookRow, "events" | "workflow_slugs" | "is_active"> {
  events: string[];
  workflow_slugs: string[];
  is_active: boolean;
}

const toWebhook = (r: WebhookRow): Webhook => ({
  ...r,
  events: parseJson<string[]>(r.events, []),
  workflow_slugs: parseJson<string[]>(r.workflow_slugs, []),
  is_active: bool(r.is_active),
});

/**
 * A webhook URL as the audit log keeps it: without user-info and with every query value masked,
 * since receivers often take a credential there (`https://user:pass@…`, `?token=…`). The log is
 * kept for good and instance admins read every org's, while the webhook itself is its org's
 * Admins' only. Scheme, host, port, path and the query's names stay, so an entry still says
 * where the calls go.
 */
export function auditUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "(not a URL)";
  }
  const userInfo = u.username || u.password ? "***@" : "";
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join("&");
  return `${u.protocol}//${userInfo}${u.host}${u.pathname}${query ? `?${query}` : ""}${u.hash ? "#***" : ""}`;
}

/** What the audit log records of a webhook: never its signing secrets, nor credentials in its URL. */
const record = (w: Webhook) => ({
  url: auditUrl(w.url),
  events: w.events,
  workflow_slugs: w.workflow_slugs,
  is_active: w.is_active,
  disabled_reason: w.disabled_reason,
});

export function* logWebhook(
  actor: Actor,
  action: string,
  w: Webhook,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  context?: Record<string, unknown>,
): Program<void> {
  yield* audit(actor, {
    action,
    org_id: w.org_id,
    target_type: "webhook",
    target_id: w.id,
    target_name: auditUrl(w.url),
    before,
    after,
    context,
  });
}

/**
 * A workflow's slug changed: the webhooks whose filter names the old slug name the new one, in
 * the rename's transaction (a filter names what the Admin chose, not a string that a rename
 * would strand and a later workflow could take). One `webhook.update` entry each. The rename
 * holds the org's row (lockForRename), as a webhook's creation or filter change does.
 */
export function* renameInFilters(
  actor: Actor,
  orgId: number,
  workflowId: number,
  from: string,
  to: string,
): Program<void> {
  const rows = yield* all<WebhookRow>("SELECT * FROM webhooks WHERE org_id = ? ORDER BY id", orgId);
  for (const r of rows) {
    const w = toWebhook(r);
    if (!w.workflow_slugs.includes(from)) continue;
    const slugs = [...new Set(w.workflow_slugs.map((s) => (s === from ? to : s)))];
    yield* run(
      "UPDATE webhooks SET workflow_slugs = ?, updated_at = ? WHERE id = ?",
      JSON.stringify(slugs),
      now(),
      w.id,
    );
    yield* logWebhook(
      actor,
      "webhook.update",
      w,
      { workflow_slugs: w.workflow_slugs },
      { workflow_slugs: slugs },
      { reason: "workflow.rename", workflow_id: workflowId },
    );
  }
}

/**
 * Taken by a workflow's rename before it writes, and by a webhook's creation or filter change
 * before it checks the filter (PostgreSQL; SQLite runs writes one at a time): the check then
 * sees every rename that ended, and a rename sees every filter written before it.
 * FOR NO KEY UPDATE, which excludes these writes and a creation's FOR UPDATE but not the share a
 * foreign key takes: a run group (src/runs/batch.ts) holding a webhook's row (its outbox read)
 * and then creating a run of the org deadlocked with a filter change that held the org's row FOR
 * UPDATE and then waited for the webhook's; and a rename held up every run created in its org.
 */
export function* lockForRename(dialect: Db["dialect"], orgId: number): Program<void> {
  yield* get(`SELECT id FROM orgs WHERE id = ?${dialect === "postgres" ? " FOR NO KEY UPDATE" : ""}`, orgId);
}

/** The slugs of a filter that named no workflow in the write's transaction. */
export class UnknownWorkflowSlugs extends Error {
  override name = "UnknownWorkflowSlugs";
  constructor(readonly slugs: string[]) {
    super(`unknown workflow slugs: ${slugs.join(", ")}`);
  }
}

/**
 * Throws UnknownWorkflowSlugs for the slugs that name no workflow of the org now, those in `kept`
 * (the filter as stored) left out: the service's check before the transaction may have read a
 * slug just before a rename moved it (docs/webhooks.md).
 */
function* checkSlugs(orgId: number, slugs: readonly string[], kept: readonly string[]): Program<void> {
  const unknown: string[] = [];
  for (const slug of slugs) {
    if (kept.includes(slug)) continue;
    const w = yield* get(
      "SELECT id FROM workflows WHERE org_id = ? AND slug = ? AND deleted_at IS NULL",
      orgId,
      slug,
    );
    if (!w) unknown.push(slug);
  }
  if (unknown.length) throw new UnknownWorkflowSlugs(unknown);
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  workflow_slugs?: string[];
  is_active?: boolean;
}

export function createWebhookStore(db: Db) {
  const lock = forUpdate(db.dialect);
  const countOf = (orgId: number) => count("SELECT count(*) AS n FROM webhooks WHERE org_id = ?", orgId);
  return {
    async count(orgId: number): Promise<number> {
      return db.exec(countOf(orgId));
    },
    /** Null when the org already has `max` webhooks (count and insert in one transaction). */
    async create(
      orgId: number,
      w: { url: string; events: string[]; workflow_slugs: string[]; is_active: boolean; secret: string },
      max: number,
      actor: Actor,
    ): Promise<Webhook | null> {
      const ts = now();
      return db.tx(
        function* () {
          // The org's row, locked: two creations racing cannot both pass the count, and a rename
          // of a workflow the filter names (which takes it too) is either seen here or sees
          // this webhook. The same lock as a rename's: runs created in the org meanwhile (their
          // foreign key's share) do not wait for it.
          yield* lockForRename(db.dialect, orgId);
          if ((yield* countOf(orgId)) >= max) return null;
          yield* checkSlugs(orgId, w.workflow_slugs, []);
          const row = yield* get<WebhookRow>(
            "INSERT INTO webhooks (org_id, url, events, workflow_slugs, is_active, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
            orgId,
            w.url,
            JSON.stringify(w.events),
            JSON.stringify(w.workflow_slugs),
            w.is_active ? 1 : 0,
            w.secret,
            ts,
            ts,
          );
          const created = toWebhook(row!);
          yield* logWebhook(actor, "webhook.create", created, null, record(created));
          return created;
        },
        { immediate: true },
      );
    },
    async get(orgId: number, id: number): Promise<Webhook | null> {
      const r = await db.exec(
        get<WebhookRow>("SELECT * FROM webhooks WHERE org_id = ? AND id = ?", orgId, id),
      );
      return r ? toWebhook(r) : null;
    },
    async list(orgId: number, limit: number, offset: number): Promise<{ count: number; items: Webhook[] }> {
      const { count: n, rows } = await countedPage<WebhookRow>(db, {
        count: "SELECT count(*) AS n FROM webhooks WHERE org_id = CAST(? AS INTEGER)",
        countParams: [orgId],
        page: "SELECT * FROM webhooks WHERE org_id = CAST(? AS INTEGER) ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
        pageParams: [orgId, limit, offset],
        order: "p.id",
        key: "id",
      });
      return { count: n, items: rows.map(toWebhook) };
    },
    /**
     * Applies the changes; (re)activating clears the automatic deactivation and its streak. A
     * PATCH that changes nothing (`{}`, or the values already there) writes nothing: it leaves
     * `updated_at`, the subscription cache's generation and an active endpoint's failure streak
     * as they are, and logs no entry (docs/api.md, "Request bodies").
     */
    async update(orgId: number, id: number, c: WebhookChanges, actor: Actor): Promise<Webhook | null> {
      return db.tx(function* () {
        // A new filter: the org's row first, as a rename takes it.
        if (c.workflow_slugs !== undefined) yield* lockForRename(db.dialect, orgId);
        const before = yield* get<WebhookRow>(
          `SELECT * FROM webhooks WHERE org_id = ? AND id = ?${lock}`,
          orgId,
          id,
        );
        if (!before) return null;
        if (c.workflow_slugs !== undefined)
          yield* checkSlugs(orgId, c.workflow_slugs, parseJson<string[]>(before.workflow_slugs, []));
        const sets: string[] = ["updated_at = ?"];
        const args: (string | number)[] = [now()];
        const set = (column: string, value: string, was: string) => {
          if (value === was) return;
          sets.push(`${column} = ?`);
          args.push(value);
        };
        if (c.url !== undefined) set("url", c.url, before.url);
        if (c.events !== undefined) set("events", JSON.stringify(c.events), before.events);
        if (c.workflow_slugs !== undefined)
          set("workflow_slugs", JSON.stringify(c.workflow_slugs), before.workflow_slugs);
        const active = bool(before.is_active);
        if (c.is_active === false && active) sets.push("is_active = 0");
        if (c.is_active === true && !active)
          sets.push(
            "is_active = 1, disabled_reason = NULL, disabled_at = NULL, failed_streak = 0, failing_since = NULL",
          );
        if (sets.length === 1) return toWebhook(before);
        const r = yield* get<WebhookRow>(
          `UPDATE webhooks SET ${sets.join(", ")} WHERE org_id = ? AND id = ? RETURNING *`,
          ...args,
          orgId,
          id,
        );
        if (!r) return null;
        const after = toWebhook(r);
        const was = toWebhook(before);
        const [b, a]: Record<string, unknown>[] = [record(was), record(after)];
        // Only masked parts changed (user-info, a query value, the fragment): the entry says so,
        // without them. Masked alike, the change looked like none and wrote no entry.
        if (was.url !== after.url && b.url === a.url) {
          b.url_masked_parts = "previous";
          a.url_masked_parts = "changed";
        }
        yield* logWebhook(actor, "webhook.update", after, b, a);
        return after;
      });
    },
    /** The new secret signs from now on; the old one also signs until `previousUntil`. */
    async rotateSecret(
      orgId: number,
      id: number,
      secret: string,
      previousUntil: string,
      actor: Actor,
    ): Promise<Webhook | null> {
      return db.tx(function* () {
        const r = yield* get<WebhookRow>(
          "UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ? WHERE org_id = ? AND id = ? RETURNING *",
          previousUntil,
          secret,
          now(),
          orgId,
          id,
        );
        if (!r) return null;
        const w = toWebhook(r);
        // That the secret changed, and until when the old one signs: never either secret.
        yield* logWebhook(actor, "webhook.rotate_secret", w, null, {
          secret_rotated_at: w.updated_at,
          previous_secret_expires_at: w.previous_secret_expires_at,
        });
        return w;
      });
    },
    /** Deliveries and their attempts go with it (ON DELETE CASCADE). */
    async remove(orgId: number, id: number, actor: Actor): Promise<boolean> {
      return db.tx(function* () {
        // Locked (PostgreSQL): two deletions at once are one 204 and one 404, one entry.
        const before = yield* get<WebhookRow>(
          `SELECT * FROM webhooks WHERE org_id = ? AND id = ?${lock}`,
          orgId,
          id,
        );
        if (!before) return false;
        yield* run("DELETE FROM webhooks WHERE org_id = ? AND id = ?", orgId, id);
        const w = toWebhook(before);
        yield* logWebhook(actor, "webhook.delete", w, record(w), null);
        return true;
      });
    },
  };
}
export type WebhookStore = ReturnType<typeof createWebhookStore>;
