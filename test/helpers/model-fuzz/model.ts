// The reference model of the model-based fuzzer: what should exist and who may do what
// (docs/access.md), kept by the fuzzer beside the real server and compared after every step.
export type Role = "viewer" | "executor" | "author" | "admin";
export const ROLES: Role[] = ["viewer", "executor", "author", "admin"];
export const rank = (r: Role | undefined) => (r ? ROLES.indexOf(r) : -1);

export interface MToken {
  id: number;
  secret: string;
  revoked: boolean;
  name: string;
}
export interface MUser {
  name: string;
  isAdmin: boolean;
  tokens: MToken[];
  /** Set for a user the fuzzer created with a password (ops-org.ts, users). */
  password?: string;
}
export interface MStep {
  id: number;
  name: string;
  validator: string;
  config: Record<string, unknown>;
  is_active: boolean;
}
export interface MWorkflow {
  id: number;
  slug: string;
  name: string;
  description: string;
  status: "active" | "inactive";
  version: number;
  steps: MStep[];
  /** Definitions by version (1-based), for restores. */
  history: string[];
}
export interface MRun {
  id: string;
  org: string;
  workflowId: number;
  createdBy: string;
  createdAt: string;
  /** Final status once seen final; null while it may still be running. */
  final: string | null;
  /** The gate holding it in its step (test_hold), until opened. */
  gate?: { open(result?: "pass" | "fail"): void };
}
export interface MWebhook {
  id: number;
  url: string;
  workflow_slugs: string[];
  is_active: boolean;
}
export interface MIdemKey {
  user: string;
  key: string;
  org: string;
  ident: string;
  body: string;
  status: number;
  runId: string;
  workflowId: number;
  /** The workflow's slug when the key's request was answered. */
  slug: string;
}
export interface MOrg {
  slug: string;
  name: string;
  suspended: boolean;
  members: Map<string, Role>;
  workflows: Map<number, MWorkflow>;
  deletedWorkflows: Map<number, string>;
  webhooks: Map<number, MWebhook>;
  runs: Map<string, MRun>;
}

export class Model {
  users = new Map<string, MUser>();
  orgs = new Map<string, MOrg>();
  keys: MIdemKey[] = [];

  org(slug: string) {
    return this.orgs.get(slug);
  }
  /** The workflow a path identifier names in `org`: an active slug, or a live numeric id. */
  workflowBy(org: MOrg, ident: string): MWorkflow | undefined {
    if (/^\d+$/.test(ident)) return org.workflows.get(Number(ident));
    return [...org.workflows.values()].find((w) => w.slug === ident);
  }
  /** Expected status of the org access check (docs/access.md order), 0 when it passes. */
  access(user: MUser, token: MToken, orgSlug: string, min: Role): number {
    if (token.revoked) return 401;
    const org = this.orgs.get(orgSlug);
    if (!org) return 404;
    const role = org.members.get(user.name);
    if (!role) return 403;
    if (org.suspended) return 403;
    if (rank(role) < rank(min)) return 403;
    return 0;
  }
}

/**
 * The model of a workflow the server has just created (its 201's body: id, steps as saved), at
 * version 1 with that version's definition recorded.
 */
export function createdWorkflow(
  created: { id: number; steps: MStep[] },
  fields: Pick<MWorkflow, "slug" | "name" | "description" | "status">,
): MWorkflow {
  const w: MWorkflow = {
    id: created.id,
    ...fields,
    version: 1,
    steps: created.steps.map((x) => ({
      id: x.id,
      name: x.name,
      validator: x.validator,
      config: x.config,
      is_active: x.is_active,
    })),
    history: [],
  };
  w.history.push(definition(w, { ids: true }));
  return w;
}

/** A workflow's definition as versions record it (status aside when `noStatus`). */
export function definition(w: MWorkflow, opts: { ids?: boolean; noStatus?: boolean } = {}) {
  return JSON.stringify({
    name: w.name,
    description: w.description,
    ...(opts.noStatus ? {} : { status: w.status }),
    steps: w.steps.map((s) => ({
      ...(opts.ids ? { id: s.id } : {}),
      name: s.name,
      validator: s.validator,
      config: s.config,
      is_active: s.is_active,
    })),
  });
}
