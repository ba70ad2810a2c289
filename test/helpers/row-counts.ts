// The rows a refused save must leave as they were (workflows, their versions and configs, stored
// schemas, runs and the audit log), counted on the test server's database.
import type { TestServer } from "./server.ts";

export const savedRowCounts = async (s: TestServer) => ({
  workflows: await s.count("workflows"),
  versions: await s.count("workflow_versions"),
  configs: await s.count("step_configs"),
  schemas: await s.count("org_schemas"),
  runs: await s.count("runs"),
  audit: await s.count("audit_log"),
});
