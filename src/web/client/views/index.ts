// Every page of the app, by path. A page that needs a role checks it itself (and the API
// checks again); the navigation only links to what the role allows.
import { route } from "../router.ts";
import { accountView } from "./account.ts";
import { adminOrgsView, adminSettingsView, adminUsersView } from "./admin.ts";
import { auditView } from "./audit.ts";
import { membersView } from "./members.ts";
import { runDetailView } from "./run-detail.ts";
import { runNewView } from "./run-new.ts";
import { runListView } from "./runs.ts";
import { tokensView } from "./tokens.ts";
import { versionDetailView, versionListView } from "./versions.ts";
import { webhookDetailView } from "./webhook-detail.ts";
import { webhookListView } from "./webhooks.ts";
import { workflowFormView } from "./workflow-form.ts";
import { workflowDetailView, workflowListView } from "./workflows.ts";

route("/app/settings/tokens/", tokensView);
route("/app/settings/account/", accountView);
route("/app/orgs/:org/workflows/", workflowListView);
route("/app/orgs/:org/new-workflow", workflowFormView);
route("/app/orgs/:org/workflows/:wf/", workflowDetailView);
route("/app/orgs/:org/workflows/:wf/edit", workflowFormView);
route("/app/orgs/:org/workflows/:wf/run", runNewView);
route("/app/orgs/:org/workflows/:wf/versions/", versionListView);
route("/app/orgs/:org/workflows/:wf/versions/:n/", versionDetailView);
route("/app/orgs/:org/runs/", runListView);
route("/app/orgs/:org/runs/:id/", runDetailView);
route("/app/orgs/:org/members/", membersView);
route("/app/orgs/:org/audit/", auditView);
route("/app/orgs/:org/webhooks/", webhookListView);
route("/app/orgs/:org/webhooks/:id/", webhookDetailView);
route("/app/admin/", adminUsersView);
route("/app/admin/orgs/", adminOrgsView);
route("/app/admin/settings/", adminSettingsView);
