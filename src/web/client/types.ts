// Shapes of the API's JSON as the app uses them (CONTRACT §2).

export type Role = "viewer" | "executor" | "author" | "admin";
export const ROLES: Role[] = ["viewer", "executor", "author", "admin"];
export const FILE_TYPES = ["JSON", "XML", "YAML", "CSV", "TEXT"] as const;

export interface User {
  id: number;
  username: string;
  name: string;
  email: string;
  is_admin: boolean;
  created_at: string;
}
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
export interface Step {
  id: number;
  order: number;
  name: string;
  validator: string;
  is_active: boolean;
  config: Record<string, unknown>;
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
export interface Finding {
  severity: "error" | "warning" | "info";
  code: string;
  message: string;
  path: string | null;
  line: number | null;
  column: number | null;
  rule?: string | null;
}
export interface RunStep {
  step_id: number;
  order: number;
  name: string;
  validator: string;
  status: string;
  duration_ms: number | null;
  findings: Finding[];
  error?: string | null;
}
export interface Run {
  id: string;
  workflow: { id: number; slug: string; version: number };
  submission: {
    filename: string | null;
    content_type: string;
    file_type: string;
    size: number;
    content_purged?: boolean;
  };
  status: string;
  summary: {
    errors: number;
    warnings: number;
    infos: number;
    steps_passed: number;
    steps_failed: number;
    steps_skipped: number;
    truncated: boolean;
  } | null;
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

export const FINAL = new Set(["succeeded", "failed", "error", "canceled", "timed_out"]);
