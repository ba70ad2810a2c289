// Shapes of the API's JSON as the app uses them (CONTRACT §2).

// The server's own types where the JSON is the same shape (type imports: nothing of the server
// is bundled); the rest are the presented shapes, which differ from the stored ones.
import type { Role } from "../../orgs/store.ts";
import { FINAL_STATUSES, type RunStep, type RunSummary } from "../../runs/types.ts";
import type { User } from "../../users/store.ts";
import type { Finding } from "../../validators/types.ts";
import type { StepDef as Step } from "../../workflows/types.ts";

export { FILE_TYPES } from "../../validators/types.ts";
export type { Finding, Role, RunStep, Step, User };
export const ROLES: Role[] = ["viewer", "executor", "author", "admin"];

export interface OrgRole {
  org_slug: string;
  name: string;
  status: string;
  role: Role;
}
export interface Me extends User {
  orgs: OrgRole[];
}
export interface Org {
  org_slug: string;
  name: string;
  status: string;
  created_at: string;
  deleted_at?: string | null;
}
export interface Token {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  token?: string;
}
export interface Workflow {
  id: number;
  slug: string;
  name: string;
  description: string;
  org_slug: string;
  status: "active" | "inactive";
  allowed_file_types: string[];
  fail_fast: boolean;
  retention_days: number | null;
  version: number;
  created_at: string;
  updated_at: string;
  step_count?: number;
  steps?: Step[];
}
export interface Validator {
  slug: string;
  name: string;
  description: string;
  supported_file_types: string[];
  config_schema: Record<string, unknown>;
}
export interface Run {
  id: string;
  workflow: { id: number; slug: string; version: number; version_url?: string };
  submission: {
    filename: string | null;
    content_type: string;
    file_type: string;
    size: number;
    metadata?: Record<string, unknown>;
    content_purged?: boolean;
  };
  status: string;
  summary: RunSummary | null;
  steps: RunStep[];
  error: string | null;
  created_by: { id: number | null; username: string | null } | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}
export interface Member {
  username: string;
  name: string;
  role: Role;
  created_at: string;
}

export const FINAL: ReadonlySet<string> = new Set(FINAL_STATUSES);
