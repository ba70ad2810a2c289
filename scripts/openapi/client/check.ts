// A client as an integrator writes one: types generated from the served document by
// openapi-typescript (./schema.d.ts), calls made with openapi-fetch, and no casts anywhere.
// scripts/openapi/typed-client.ts generates the types, compiles this file with tsc and runs it
// against a real server; a mismatch between the document and the API fails it, at compile time
// (a shape) or here (a status, a field, a header).
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Run = components["schemas"]["Run"];
type Envelope = components["schemas"]["RunEnvelope"];
type Multipart = components["schemas"]["RunMultipart"];

const baseUrl = process.env.ASSAY_URL ?? "";
const org_slug = process.env.ASSAY_ORG ?? "";
const client = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Bearer ${process.env.ASSAY_TOKEN ?? ""}` },
});
const RUNS = "/api/v1/orgs/{org_slug}/workflows/{workflow}/runs/";
const FINAL = ["succeeded", "failed", "error", "canceled", "timed_out"];

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`typed client: ${what}`);
}
const codes = (run: Run) =>
  run.steps.flatMap((s) => s.findings.map((f) => `${f.code}@${f.line ?? "-"}:${f.column ?? "-"}`));

// A workflow: well-formed JSON or XML.
const created = await client.POST("/api/v1/orgs/{org_slug}/workflows/", {
  params: { path: { org_slug } },
  body: {
    slug: "typed-client",
    name: "Typed client",
    allowed_file_types: ["JSON", "XML"],
    steps: [{ name: "Well-formed", validator: "syntax", config: {} }],
  },
});
check(created.data !== undefined, `create workflow answered ${created.response.status}`);
const workflow = created.data.slug;
check(created.response.headers.get("Location") === created.data.url, "the 201 has the workflow's Location");
const path = { org_slug, workflow };

// Raw mode: the body is the document, its type in Content-Type.
const raw = await client.POST(RUNS, {
  params: { path, header: { "X-Filename": "order.xml" } },
  body: "<order><id>1</id></order",
  headers: { "Content-Type": "application/xml" },
  bodySerializer: (body) => body,
});
check(raw.data !== undefined && raw.response.status === 201, `raw answered ${raw.response.status}`);
check(raw.data.status === "failed", `raw run is ${raw.data.status}`);
check(
  raw.data.submission.filename === "order.xml" && raw.data.submission.file_type === "XML",
  "raw submission",
);
check(raw.response.headers.get("Location") === raw.data.url, "a 201 run answer carries Location");
const rawFindings = codes(raw.data);
check(rawFindings.length > 0, "raw run has findings");

// JSON envelope: {content, content_type, filename, metadata}.
const envelope: Envelope = {
  content: '{"id": 1,',
  content_type: "application/json",
  filename: "order.json",
  metadata: { source: "typed-client" },
};
const env = await client.POST(RUNS, { params: { path }, body: envelope });
check(env.data !== undefined && env.response.status === 201, `envelope answered ${env.response.status}`);
check(env.data.status === "failed" && env.data.submission.metadata.source === "typed-client", "envelope run");

// Multipart: a file part and text parts.
const form: Multipart = { file: '{"id": 2}', filename: "good.json", content_type: "application/json" };
const toFormData = (f: Multipart) => {
  const fd = new FormData();
  fd.append(
    "file",
    new Blob([f.file ?? ""], { type: f.content_type ?? "application/octet-stream" }),
    f.filename,
  );
  if (f.content_type) fd.append("content_type", f.content_type);
  return fd;
};
const mp = await client.POST(RUNS, { params: { path }, body: form, bodySerializer: () => toFormData(form) });
check(mp.data !== undefined && mp.response.status === 201, `multipart answered ${mp.response.status}`);
check(mp.data.status === "succeeded" && mp.data.submission.filename === "good.json", "multipart run");

// 202: ask for it at once, then poll Location after Retry-After.
const queued = await client.POST(RUNS, {
  params: { path, header: { Prefer: "respond-async", "Idempotency-Key": `typed-${Date.now()}` } },
  body: { content: '{"id": 3}', content_type: "application/json" },
});
check(
  queued.data !== undefined && queued.response.status === 202,
  `async answered ${queued.response.status}`,
);
check(queued.response.headers.get("Preference-Applied") === "respond-async", "Preference-Applied");
const location = queued.response.headers.get("Location");
check(location === queued.data.url, "the 202 has Location");
const retryAfter = Number(queued.response.headers.get("Retry-After"));
check(retryAfter >= 1, "the 202 has Retry-After");
let run: Run = queued.data;
let polls = 0;
const deadline = Date.now() + 120_000;
while (!FINAL.includes(run.status)) {
  check(Date.now() < deadline, `run ${run.id} still ${run.status} after 120 s`);
  await new Promise((r) => setTimeout(r, 200));
  const got = await client.GET("/api/v1/orgs/{org_slug}/runs/{run_id}/", {
    params: { path: { org_slug, run_id: queued.data.id } },
  });
  check(got.data !== undefined, `poll answered ${got.response.status}`);
  run = got.data;
  polls++;
}
check(
  run.status === "succeeded" && run.summary !== null && run.summary.errors === 0,
  `polled run is ${run.status}`,
);

// An error's code, typed.
const missing = await client.GET("/api/v1/orgs/{org_slug}/workflows/{workflow}/", {
  params: { path: { org_slug, workflow: "no-such-workflow" } },
});
check(missing.error !== undefined && missing.error.code === "not_found", "404 has code not_found");
check(missing.error.status === 404 && Array.isArray(missing.error.errors), "the error object");

console.log(
  `typed client: workflow ${workflow} v${created.data.version}; raw ${raw.data.status} [${rawFindings.join(" ")}]; ` +
    `envelope ${env.data.status} [${codes(env.data).join(" ")}]; multipart ${mp.data.status}; ` +
    `202 polled ${polls}x to ${run.status}; error code ${missing.error.code}`,
);
