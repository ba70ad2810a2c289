// Who changed what: the shapes of the audit log (docs/audit.md).

/** Who made a change, and from where. Built by the route (or the CLI), never by a service. */
export interface Actor {
  /** user: an API token or web session; cli: an `assay` command; system: the server itself. */
  type: "user" | "cli" | "system" | "anonymous";
  user_id: number | null;
  /** The user's name when it acted (kept after the user is deleted); the OS user for the CLI. */
  username: string | null;
  token_id: number | null;
  session_id: number | null;
  /** The client address as configured (ASSAY_TRUST_PROXY); null for the CLI and the system. */
  ip: string | null;
}

/** One change, as a write path describes it to the log. */
/**
 * Every action the log records (docs/audit.md). The `action` filter accepts these, or a kind
 * (`workflow.*`), and refuses anything else with a 400.
 */
export const AUDIT_ACTIONS = [
  "workflow.create",
  "workflow.update",
  "workflow.restore",
  "workflow.delete",
  "step.create",
  "step.update",
  "step.delete",
  "schema.create",
  "schema.update",
  "schema.delete",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.rotate_secret",
  "webhook.ping",
  "webhook.redeliver",
  "member.add",
  "member.update",
  "member.remove",
  "token.create",
  "token.revoke",
  "user.create",
  "user.update",
  "user.delete",
  "user.set_password",
  "user.password_change",
  "org.create",
  "org.update",
  "org.suspend",
  "org.restore",
  "org.delete",
  "settings.update",
  "auth.login",
  "auth.login_failed",
  "auth.logout",
  "run.cancel",
  "audit.purge",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface Change {
  /** `noun.verb`, one of AUDIT_ACTIONS: workflow.update, member.add, token.revoke … */
  action: string;
  /** The org the change belongs to (its Admins read it); null for instance-wide changes. */
  org_id: number | null;
  target_type: string;
  target_id: string | number | null;
  /** A readable name of the target at the time (slug, username, URL). */
  target_name?: string | null;
  /** The fields as they were; for an update only those that changed are kept. */
  before?: Record<string, unknown> | null;
  /** The fields as they became. */
  after?: Record<string, unknown> | null;
  /** Facts about the change that are neither before nor after (restored_from, reason). */
  context?: Record<string, unknown>;
}

/** A stored entry: the columns of audit_log. */
export interface AuditRow {
  seq: number;
  created_at: string;
  org_id: number | null;
  actor_type: Actor["type"];
  actor_user_id: number | null;
  actor_username: string | null;
  token_id: number | null;
  session_id: number | null;
  client_ip: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  target_name: string | null;
  /** Canonical JSON (src/audit/chain.ts) or null. */
  changes: string | null;
  prev_hash: string;
  hash: string;
}
