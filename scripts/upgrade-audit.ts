// Upgrade audit (docs/deploy.md, "Upgrades checked from earlier builds"): an old build fills a
// data dir (or a PostgreSQL database) through its own API, then this tree serves it, and
// everything is read back and compared; problems are printed at the end. With FIXTURE=DIR, the
// old build's data is also written there as a SQL dump with the answers it gave
// (test/fixtures/upgrade/README.md).
//
//   git worktree add -f /tmp/old <commit>   # and node_modules that commit's package.json needs
//   bun scripts/upgrade-audit.ts /tmp/old sqlite|postgres
//
// PostgreSQL: a throwaway cluster (test/helpers/pg-cluster.ts); on SQLite the upgraded data dir
// is also copied to PostgreSQL with `assay db copy` and checked again there.
// biome-ignore-all lint/suspicious/noExplicitAny: answers of old builds, whatever their shape
import { createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { freePort, startPgCluster } from "../test/helpers/pg-cluster.ts";

const [oldTree, backend] = process.argv.slice(2) as [string, "sqlite" | "postgres"];
if (!oldTree || !["sqlite", "postgres"].includes(backend)) {
  console.error("usage: bun scripts/upgrade-audit.ts OLD_WORKTREE sqlite|postgres");
  process.exit(2);
}
const OLD = resolve(oldTree);
const NEW = resolve(import.meta.dir, "..");
const sha = Bun.spawnSync(["git", "-C", OLD, "rev-parse", "--short=7", "HEAD"]).stdout.toString().trim();
const out = mkdtempSync(join(tmpdir(), `assay-upgrade-${sha}-${backend}-`));
console.log(`work dir: ${out}`);
const dataDir = join(out, "data");
const problems: string[] = [];
const note = (s: string) => {
  console.log(`!! ${s}`);
  problems.push(s);
};

let cluster = null as Awaited<ReturnType<typeof startPgCluster>> | null;
let pgUrl: string | undefined;
async function newPgDb(name: string) {
  cluster ??= await startPgCluster();
  const admin = new SQL({ url: `${cluster.baseUrl}postgres`, max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  return `${cluster.baseUrl}${name}`;
}
if (backend === "postgres") pgUrl = await newPgDb("upgraded");

// Webhook receiver, alive across both servers; `failing` answers 503 (deliveries left pending).
let failing = false;
const received: { id: string; ts: string; sig: string; body: string; path: string }[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    received.push({
      id: req.headers.get("webhook-id") ?? "",
      ts: req.headers.get("webhook-timestamp") ?? "",
      sig: req.headers.get("webhook-signature") ?? "",
      body: await req.text(),
      path: new URL(req.url).pathname,
    });
    return failing ? new Response("down", { status: 503 }) : new Response("ok");
  },
});
const hookUrl = (p: string) => `http://127.0.0.1:${receiver.port}${p}`;

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  ASSAY_WEBHOOK_ALLOW_PRIVATE: "true",
  ASSAY_RATE_LIMIT_DISABLED: "true",
  ASSAY_LOG_LEVEL: "warn",
  ASSAY_WORKERS: "1",
};
const dbArgs = () => (pgUrl ? ["--database-url", pgUrl] : ["--data-dir", dataDir]);

function cli(tree: string, args: string[], stdin?: string) {
  const r = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    cwd: tree,
    env,
    stdin: stdin ? new TextEncoder().encode(stdin) : undefined,
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

async function serve(tree: string) {
  const p = Bun.spawn([process.execPath, "src/main.ts", "serve", "--port", String(port), ...dbArgs()], {
    cwd: tree,
    env,
    stdout: Bun.file(join(out, `serve-${tree === NEW ? "new" : "old"}.log`)),
    stderr: "pipe",
  });
  const errText = new Response(p.stderr).text();
  for (let i = 0; i < 600; i++) {
    if (p.exitCode !== null) throw new Error(`server exited ${p.exitCode}: ${await errText}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  return {
    /** Killed outright (SIGKILL): no shutdown, runs and deliveries left as they were. */
    async kill() {
      p.kill("SIGKILL");
      await p.exited;
    },
    async stop() {
      p.kill("SIGTERM");
      await p.exited;
      const e = await errText;
      writeFileSync(join(out, `serve-${tree === NEW ? "new" : "old"}.err`), e);
    },
  };
}

type Answer = { status: number; body: any; headers: Headers };
async function call(
  method: string,
  path: string,
  opts: {
    token?: string;
    json?: unknown;
    body?: BodyInit;
    headers?: Record<string, string>;
    cookie?: string;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.cookie) headers.cookie = opts.cookie;
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  const r = await fetch(`${base}${path}`, { method, headers, body, redirect: "manual" });
  const text = await r.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: r.status, body: parsed, headers: r.headers };
}
async function ok(method: string, path: string, opts: Parameters<typeof call>[2] = {}, want?: number) {
  const a = await call(method, path, opts);
  if (want ? a.status !== want : a.status >= 300)
    throw new Error(`${method} ${path} → ${a.status} ${JSON.stringify(a.body).slice(0, 400)}`);
  return a;
}

// ---------------------------------------------------------------- phase 1: the old build
const init = cli(
  OLD,
  ["init", "--org", "acme", "--admin", "me", "--password-stdin", ...dbArgs()],
  "Mimosa-Harbor-42!\n",
);
if (init.code !== 0) throw new Error(`init: ${init.err}`);
const T = init.out.trim().split("\n").at(-1)!.trim();
let server = await serve(OLD);
const validators = new Set(
  (
    (await ok("GET", "/api/v1/validators/", { token: T })).body.results ??
    (await ok("GET", "/api/v1/validators/", { token: T })).body
  ).map((v: any) => v.slug),
);
console.log("validators:", [...validators].join(","));
const has = async (path: string) => (await call("GET", path, { token: T })).status !== 404;

await ok("POST", "/api/v1/admin/users/", {
  token: T,
  json: { username: "alice", password: "Teal-Lantern-77!", name: "Alice", email: "alice@example.com" },
});
await ok("POST", "/api/v1/admin/users/", { token: T, json: { username: "bob", name: "Bob" } });
await ok("POST", "/api/v1/admin/orgs/", { token: T, json: { org_slug: "beta", name: "Beta Ltd" } });
await ok("POST", "/api/v1/orgs/acme/members/", { token: T, json: { username: "alice", role: "author" } });
await ok("POST", "/api/v1/orgs/acme/members/", { token: T, json: { username: "bob", role: "viewer" } });
await ok("POST", "/api/v1/orgs/beta/members/", { token: T, json: { username: "alice", role: "admin" } });
const tokCi = (await ok("POST", "/api/v1/users/me/tokens/", { token: T, json: { name: "ci" } })).body;
const tokExp = (
  await ok("POST", "/api/v1/users/me/tokens/", { token: T, json: { name: "expiring", expires_in_days: 30 } })
).body;
const tokRev = (await ok("POST", "/api/v1/users/me/tokens/", { token: T, json: { name: "revoked" } })).body;
await ok("DELETE", `/api/v1/users/me/tokens/${tokRev.id}/`, { token: T });
// alice signs in (web session) and makes a token with it
const login = await ok("POST", "/api/v1/auth/login/", {
  json: { username: "alice", password: "Teal-Lantern-77!" },
});
const aliceCookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
const aliceCsrf = login.body.csrf_token;
const tokAlice = (
  await ok("POST", "/api/v1/users/me/tokens/", {
    cookie: aliceCookie,
    headers: { "x-csrf-token": aliceCsrf },
    json: { name: "alice-cli" },
  })
).body;
const tokens = {
  me: T,
  ci: tokCi.token,
  expiring: tokExp.token,
  alice: tokAlice.token,
  revoked: tokRev.token,
};

const schemasRoute = await has("/api/v1/orgs/acme/schemas/");
if (schemasRoute)
  await ok("POST", "/api/v1/orgs/acme/schemas/", {
    token: T,
    json: {
      uri: "https://example.com/address.json",
      schema: { type: "object", required: ["city"], properties: { city: { type: "string", minLength: 2 } } },
    },
  });

const XSD = `<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="invoice"><xs:complexType><xs:sequence><xs:element name="id" type="xs:integer"/><xs:element name="total" type="xs:decimal"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const RNG = `<element name="invoice" xmlns="http://relaxng.org/ns/structure/1.0"><element name="id"><text/></element><element name="total"><text/></element></element>`;
const DTD = `<!ELEMENT invoice (id, total)><!ELEMENT id (#PCDATA)><!ELEMENT total (#PCDATA)>`;
const SCH = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="invoice"><sch:assert id="BR-1" test="number(total) &gt; 0">total must be positive</sch:assert></sch:rule></sch:pattern></sch:schema>`;
const orderSchema: any = {
  type: "object",
  required: ["id", "total"],
  properties: {
    id: { type: "integer" },
    total: { type: "number" },
    lines: { type: "array", items: { type: "object", required: ["sku"] } },
  },
};
if (schemasRoute) orderSchema.properties.address = { $ref: "https://example.com/address.json" };
const workflows: Record<string, any> = {
  orders: {
    slug: "orders",
    name: "Orders",
    description: "order documents",
    allowed_file_types: ["JSON", "YAML"],
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      { name: "schema", validator: "json_schema", config: { schema: orderSchema, draft: "2020-12" } },
      {
        name: "rules",
        validator: "assertions",
        config: {
          rules: [
            { id: "positive", expr: "data.total > 0", message: "total must be positive" },
            { id: "lines", expr: "size(data.lines) < 3", message: "too many lines", severity: "warning" },
          ],
        },
      },
    ],
  },
  invoices: {
    slug: "invoices",
    name: "Invoices",
    allowed_file_types: ["XML"],
    fail_fast: false,
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      { name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: XSD } },
      { name: "rng", validator: "xml_schema", config: { schema_type: "relaxng", schema: RNG } },
      { name: "dtd", validator: "xml_schema", config: { schema_type: "dtd", schema: DTD } },
      ...(validators.has("schematron")
        ? [{ name: "rules", validator: "schematron", config: { schema: SCH } }]
        : []),
    ],
  },
  table: {
    slug: "table",
    name: "Table",
    allowed_file_types: ["CSV"],
    fail_fast: false,
    steps: [
      {
        name: "csv",
        validator: "csv_table",
        config: {
          schema: {
            fields: [
              { name: "id", type: "integer" },
              { name: "name", type: "string", constraints: { required: true } },
            ],
            primaryKey: "id",
          },
        },
      },
      {
        name: "row rules",
        validator: "assertions",
        config: { rules: [{ id: "short", expr: "size(row.name) < 10", message: "name too long" }] },
      },
    ],
  },
  notes: {
    slug: "notes",
    name: "Notes",
    allowed_file_types: ["TEXT"],
    fail_fast: false,
    steps: [
      {
        name: "text",
        validator: "text_rules",
        config: {
          max_lines: 5,
          max_line_length: 40,
          patterns: [{ regex: "TODO", must: "not_match", message: "no TODOs", severity: "warning" }],
        },
      },
      { name: "off", validator: "text_rules", is_active: false, config: { max_bytes: 1 } },
    ],
  },
};
for (const wf of Object.values(workflows))
  await ok("POST", "/api/v1/orgs/acme/workflows/", { token: T, json: wf });
await ok("POST", "/api/v1/orgs/beta/workflows/", {
  token: tokens.alice,
  json: {
    slug: "b",
    name: "B",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {} }],
  },
});
// versions: PATCH, PUT, step add and step patch
await ok("PATCH", "/api/v1/orgs/acme/workflows/orders/", {
  token: T,
  json: { description: "order documents, v2" },
});
const ordersPut = structuredClone(workflows.orders);
ordersPut.steps[1].config.assert_formats = true;
await ok("PUT", "/api/v1/orgs/acme/workflows/orders/", { token: tokens.alice, json: ordersPut });
const addStep = await ok("POST", "/api/v1/orgs/acme/workflows/notes/steps/", {
  token: T,
  json: { name: "size", validator: "text_rules", config: { max_bytes: 200 } },
});
await ok("PATCH", `/api/v1/orgs/acme/workflows/notes/steps/${addStep.body.id}/`, {
  token: T,
  json: { name: "size limit" },
});

// webhooks
const hooks = [
  (
    await ok("POST", "/api/v1/orgs/acme/webhooks/", {
      token: T,
      json: { url: hookUrl("/all"), events: ["run.completed"] },
    })
  ).body,
  (
    await ok("POST", "/api/v1/orgs/acme/webhooks/", {
      token: T,
      json: { url: hookUrl("/failed"), events: ["run.failed"], workflow_slugs: ["orders"] },
    })
  ).body,
];
const secrets: Record<string, string> = { "/all": hooks[0].secret, "/failed": hooks[1].secret };

// documents: each run is [workflow, how, body, content-type]
const docs: [string, string, string][] = [
  [
    "orders",
    JSON.stringify({
      id: 1,
      total: 10,
      lines: [{ sku: "a" }],
      ...(schemasRoute ? { address: { city: "Berlin" } } : {}),
    }),
    "application/json",
  ],
  [
    "orders",
    '{"id": "seven", "total": -1, "lines": [{}, {"sku": 1}, {"sku": "x"}], "address": {"city": "B"}}',
    "application/json",
  ],
  ["orders", "id: 3\ntotal: 0\nlines: []\n", "application/yaml"],
  ["orders", '{"id": 1,\n "total": }', "application/json"],
  ["invoices", "<invoice><id>1</id><total>5</total></invoice>", "application/xml"],
  ["invoices", "<invoice><id>x</id><total>-5</total><extra/></invoice>", "application/xml"],
  ["invoices", "<invoice><id>1</id>", "application/xml"],
  ["table", "id,name\n1,ann\n2,bob\n", "text/csv"],
  ["table", "id,name\n1,ann\nx,\n1,averyveryverylongname\n", "text/csv"],
  ["notes", "hello\nworld\n", "text/plain"],
  ["notes", "TODO: one\n" + "x".repeat(60) + "\na\nb\nc\nd\ne\n", "text/plain"],
];
const runs: { id: string; wf: string; doc: number; mode: string }[] = [];
async function waitFinal(id: string, tok = T) {
  for (let i = 0; i < 300; i++) {
    const r = await ok("GET", `/api/v1/orgs/acme/runs/${id}/`, { token: tok });
    if (!["queued", "running"].includes(r.body.status)) return r.body;
    await Bun.sleep(100);
  }
  throw new Error(`run ${id} never finished`);
}
const SMALL = !!process.env.FIXTURE;
for (const [i, [wf, body, ct]] of docs.entries()) {
  if (SMALL && ![0, 1, 4, 5, 7, 8, 9, 10].includes(i)) continue;
  const r = await ok("POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
    token: T,
    body,
    headers: { "content-type": ct },
  });
  runs.push({ id: r.body.id, wf, doc: i, mode: "sync" });
  if (SMALL && i !== 1) continue;
  const a = await ok(
    "POST",
    `/api/v1/orgs/acme/workflows/${wf}/runs/`,
    { token: tokens.ci, body, headers: { "content-type": ct, prefer: "respond-async" } },
    202,
  );
  runs.push({ id: a.body.id, wf, doc: i, mode: "async" });
}
// envelope with metadata, multipart, idempotency key, by alice
const env1 = await ok("POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
  token: tokens.alice,
  json: {
    content: docs[1]![1],
    content_type: "application/json",
    filename: "order-7.json",
    metadata: { batch: 7, source: "erp" },
  },
});
runs.push({ id: env1.body.id, wf: "orders", doc: 1, mode: "envelope" });
const fd = new FormData();
fd.append("file", new Blob([docs[5]![1]], { type: "application/xml" }), "inv.xml");
fd.append("metadata", JSON.stringify({ k: "v" }));
const mp = await ok("POST", "/api/v1/orgs/acme/workflows/invoices/runs/", { token: T, body: fd });
runs.push({ id: mp.body.id, wf: "invoices", doc: 5, mode: "multipart" });
const idem = await ok("POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
  token: T,
  body: docs[0]![1],
  headers: { "content-type": "application/json", "idempotency-key": "upgrade-key-1" },
});
runs.push({ id: idem.body.id, wf: "orders", doc: 0, mode: "idempotent" });
const idemAnswer = { status: idem.status, body: idem.body };
for (const r of runs) await waitFinal(r.id);
// a canceled run? only if one is held; skip. Wait for deliveries: every run → /all, failed orders → /failed
const expectAll = runs.length;
for (let i = 0; i < 300 && received.filter((x) => x.path === "/all").length < expectAll; i++)
  await Bun.sleep(100);
console.log(`old: ${runs.length} runs, ${received.length} deliveries`);
if (received.filter((x) => x.path === "/all").length < expectAll)
  note(`old build delivered ${received.filter((x) => x.path === "/all").length}/${expectAll} to /all`);

// snapshot of every readable thing
const paths = new Set<string>([
  "/api/v1/users/me/",
  "/api/v1/orgs/",
  "/api/v1/orgs/acme/",
  "/api/v1/orgs/beta/",
  "/api/v1/orgs/acme/members/",
  "/api/v1/orgs/acme/workflows/",
  "/api/v1/orgs/acme/runs/?page_size=200",
  "/api/v1/orgs/acme/webhooks/",
  "/api/v1/admin/users/",
  "/api/v1/admin/orgs/",
  "/api/v1/admin/settings/",
  "/api/v1/users/me/tokens/",
]);
for (const wf of [...Object.keys(workflows)]) {
  paths.add(`/api/v1/orgs/acme/workflows/${wf}/`);
  paths.add(`/api/v1/orgs/acme/runs/?workflow=${wf}`);
}
for (const r of runs) {
  paths.add(`/api/v1/orgs/acme/runs/${r.id}/`);
  paths.add(`/api/v1/orgs/acme/runs/${r.id}/content/`);
}
for (const h of hooks) paths.add(`/api/v1/orgs/acme/webhooks/${h.id}/deliveries/`);
if (schemasRoute) paths.add("/api/v1/orgs/acme/schemas/");
const optional = [
  `/api/v1/orgs/acme/runs/${runs[1]!.id}/findings/`,
  `/api/v1/orgs/acme/workflows/orders/versions/`,
  `/api/v1/orgs/acme/workflows/orders/versions/1/`,
  `/api/v1/orgs/acme/workflows/orders/versions/2/`,
  `/api/v1/orgs/acme/audit/`,
  `/api/v1/admin/audit/`,
];
for (const p of optional) if (await has(p)) paths.add(p);
const snapshot: Record<string, unknown> = {};
for (const p of paths) snapshot[p] = (await ok("GET", p, { token: T })).body;
const reportJson = await call("GET", `/api/v1/orgs/acme/runs/${runs[1]!.id}/report/?format=json`, {
  token: T,
});
writeFileSync(join(out, "snapshot.json"), JSON.stringify({ tokens, snapshot }, null, 1));
// Work in flight when the old build dies: runs queued behind one worker, deliveries refused by the
// receiver (pending, to be retried). Today's build must finish and deliver them.
failing = true;
const inflight: { id: string; doc: number }[] = [];
for (const r of [...runs, ...runs].filter((x) => x.mode === "sync")) {
  const [wf, body, ct] = docs[r.doc]!;
  const a = await ok(
    "POST",
    `/api/v1/orgs/acme/workflows/${wf}/runs/`,
    { token: tokens.ci, body, headers: { "content-type": ct, prefer: "respond-async" } },
    202,
  );
  inflight.push({ id: a.body.id, doc: r.doc });
}
await server.kill();
failing = false;
const oldReceived = received.length;
if (process.env.FIXTURE) {
  const { Database } = await import("bun:sqlite");
  const dir = process.env.FIXTURE;
  let dump: string;
  if (backend === "sqlite") {
    const db = new Database(join(dataDir, "assay.db"), { readonly: true });
    const lit = (v: unknown) =>
      v === null
        ? "NULL"
        : typeof v === "number" || typeof v === "bigint"
          ? String(v)
          : v instanceof Uint8Array
            ? `X'${Buffer.from(v).toString("hex")}'`
            : `'${String(v).replaceAll("'", "''")}'`;
    const objs = db
      .query(
        "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
      )
      .all() as any[];
    const lines = [`-- Made by ${sha} (git) through its own API: test/fixtures/upgrade/README.md`];
    for (const o of objs.filter((o) => o.type === "table")) lines.push(`${o.sql};`);
    for (const o of objs.filter((o) => o.type === "table")) {
      for (const row of db.query(`SELECT * FROM "${o.name}"`).all() as Record<string, unknown>[])
        lines.push(
          `INSERT INTO "${o.name}" (${Object.keys(row)
            .map((k) => `"${k}"`)
            .join(", ")}) VALUES (${Object.values(row).map(lit).join(", ")});`,
        );
    }
    if (db.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'").get())
      for (const row of db.query("SELECT name, seq FROM sqlite_sequence").all() as any[])
        lines.push(`INSERT INTO sqlite_sequence (name, seq) VALUES (${lit(row.name)}, ${row.seq});`);
    for (const o of objs.filter((o) => o.type !== "table")) lines.push(`${o.sql};`);
    lines.push(`PRAGMA user_version = ${(db.query("PRAGMA user_version").get() as any).user_version};`);
    db.close();
    dump = `${lines.join("\n")}\n`;
  } else {
    const r = Bun.spawnSync([
      "pg_dump",
      "--inserts",
      "--no-owner",
      "--no-privileges",
      "--no-comments",
      pgUrl!,
    ]);
    dump = `-- Made by ${sha} (git) through its own API: test/fixtures/upgrade/README.md\n${r.stdout
      .toString()
      .split("\n")
      .filter(
        (l) =>
          !l.startsWith("\\") &&
          !l.startsWith("--") &&
          !/set_config\('search_path'/.test(l) &&
          l.trim() !== "",
      )
      .join("\n")}\n`;
  }
  writeFileSync(join(dir, `${sha}.${backend}.sql`), dump);
  const keep = Object.fromEntries(
    Object.entries(snapshot).filter(([p]) => !/content\/|deliveries|audit|\?/.test(p)),
  );
  writeFileSync(
    join(dir, `${sha}.${backend}.json`),
    `${JSON.stringify({
      commit: sha,
      base,
      tokens,
      passwords: { me: "Mimosa-Harbor-42!", alice: "Teal-Lantern-77!" },
      session: { cookie: aliceCookie, csrf: aliceCsrf },
      webhooks: hooks.map((h: any) => ({ id: h.id, secret: h.secret, url: h.url })),
      inflight,
      idempotent: { key: "upgrade-key-1", run: idemAnswer.body.id, status: idemAnswer.status, doc: 0 },
      docs,
      runs,
      answers: keep,
    })}\n`,
  );
}
console.log("old server killed");

// ---------------------------------------------------------------- phase 2: today's tree
async function verify(label: string) {
  server = await serve(NEW);
  console.log(`-- ${label}: today's server up`);
  const volatile = new Set(["last_used_at", "next", "previous"]);
  const compare = (path: string, a: any, b: any, at = ""): void => {
    if (a === b) return;
    if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
      note(
        `${label} ${path} ${at}: was ${JSON.stringify(a)?.slice(0, 200)}, now ${JSON.stringify(b)?.slice(0, 200)}`,
      );
      return;
    }
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) {
        note(`${label} ${path} ${at}: array length ${a.length} → ${Array.isArray(b) ? b.length : typeof b}`);
        return;
      }
      for (const [i, x] of a.entries()) compare(path, x, b[i], `${at}[${i}]`);
      return;
    }
    for (const k of Object.keys(a)) {
      if (volatile.has(k)) continue;
      if (!(k in b)) note(`${label} ${path} ${at}.${k}: missing now`);
      else compare(path, a[k], b[k], `${at}.${k}`);
    }
  };
  for (const [p, old] of Object.entries(snapshot)) {
    const now = await call("GET", p, { token: T });
    if (now.status !== 200) {
      note(`${label} GET ${p} → ${now.status} ${JSON.stringify(now.body).slice(0, 300)}`);
      continue;
    }
    // lists that grow with our own actions (audit, runs list, deliveries) compare by id
    if (
      /audit|deliveries|runs\/\?|tokens\/$|admin\/users/.test(p) &&
      old &&
      typeof old === "object" &&
      "results" in (old as any)
    ) {
      const byId = new Map((now.body.results as any[]).map((x) => [x.id ?? x.seq ?? x.username, x]));
      for (const item of (old as any).results) {
        const match = byId.get(item.id ?? item.seq ?? item.username);
        if (!match && !/audit/.test(p)) note(`${label} ${p}: item ${item.id ?? item.username} missing now`);
        else if (match) compare(p, item, match);
      }
      continue;
    }
    compare(p, old, now.body);
  }
  for (const [name, tok] of Object.entries(tokens)) {
    const r = await call("GET", "/api/v1/users/me/", { token: tok });
    if ((name === "revoked") !== (r.status === 401)) note(`${label} token ${name}: ${r.status}`);
  }
  for (const [u, pw] of [
    ["me", "Mimosa-Harbor-42!"],
    ["alice", "Teal-Lantern-77!"],
  ]) {
    const r = await call("POST", "/api/v1/auth/login/", { json: { username: u, password: pw } });
    if (r.status !== 200) note(`${label} login ${u}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const sess = await call("GET", "/api/v1/auth/session/", { cookie: aliceCookie });
  if (sess.status !== 200) note(`${label} old session cookie: ${sess.status} ${JSON.stringify(sess.body)}`);
  else {
    const w = await call("PATCH", "/api/v1/orgs/acme/workflows/notes/", {
      cookie: aliceCookie,
      headers: { "x-csrf-token": aliceCsrf },
      json: { description: `via old session ${label}` },
    });
    if (w.status !== 200) note(`${label} write with old session+csrf: ${w.status} ${JSON.stringify(w.body)}`);
    else {
      snapshot["/api/v1/orgs/acme/workflows/notes/"] = (
        await call("GET", "/api/v1/orgs/acme/workflows/notes/", { token: T })
      ).body;
      snapshot["/api/v1/orgs/acme/workflows/"] = (
        await call("GET", "/api/v1/orgs/acme/workflows/", { token: T })
      ).body;
    }
  }
  const replay = await call("POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
    token: T,
    body: docs[0]![1],
    headers: { "content-type": "application/json", "idempotency-key": "upgrade-key-1" },
  });
  if (
    replay.status !== idemAnswer.status ||
    replay.headers.get("idempotent-replayed") !== "true" ||
    replay.body.id !== idemAnswer.body.id
  )
    note(
      `${label} idempotency replay: ${replay.status} replayed=${replay.headers.get("idempotent-replayed")} id ${replay.body.id} vs ${idemAnswer.body.id}`,
    );
  // runs the old build left queued finish with the status of the same document's sync run, and
  // the deliveries it left pending arrive
  for (const f of inflight) {
    let r: Answer | null = null;
    for (let i = 0; i < 600; i++) {
      r = await call("GET", `/api/v1/orgs/acme/runs/${f.id}/`, { token: T });
      if (r.status !== 200 || !["queued", "running"].includes(r.body.status)) break;
      await Bun.sleep(100);
    }
    const sync = runs.find((x) => x.mode === "sync" && x.doc === f.doc)!;
    const want = (snapshot[`/api/v1/orgs/acme/runs/${sync.id}/`] as any).status;
    if (r?.status !== 200 || r.body.status !== want)
      note(
        `${label} run left in flight ${f.id} (doc ${f.doc}): ${r?.status} ${r?.body?.status}, want ${want}`,
      );
  }
  const deliveredIds = () =>
    new Set(
      received
        .filter((x) => x.path === "/all")
        .map((x) => {
          try {
            return JSON.parse(x.body).data?.run?.id;
          } catch {
            return null;
          }
        }),
    );
  for (let i = 0; i < 600 && inflight.some((f) => !deliveredIds().has(f.id)); i++) await Bun.sleep(100);
  const missing = inflight.filter((f) => !deliveredIds().has(f.id));
  if (missing.length)
    note(`${label} deliveries of runs left in flight missing: ${missing.length}/${inflight.length}`);
  const rj = await call("GET", `/api/v1/orgs/acme/runs/${runs[1]!.id}/report/?format=json`, { token: T });
  if (rj.status !== reportJson.status) note(`${label} report json ${reportJson.status} → ${rj.status}`);
  // new runs on old workflows: the same findings as the old build's sync run of the same document
  const before = received.length;
  let newRuns = 0;
  for (const old of runs.filter((r) => r.mode === "sync")) {
    const [wf, body, ct] = docs[old.doc]!;
    const r = await call("POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
      token: tokens.ci,
      body,
      headers: { "content-type": ct },
    });
    newRuns++;
    if (r.status !== 201) {
      note(`${label} new run on ${wf} doc ${old.doc}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      continue;
    }
    const was = snapshot[`/api/v1/orgs/acme/runs/${old.id}/`] as any;
    if (r.body.status !== was.status)
      note(`${label} new run ${wf} doc ${old.doc}: status ${was.status} → ${r.body.status}`);
    const f = (x: any) =>
      JSON.stringify(
        x.steps.map((s: any) => [
          s.name,
          s.status,
          s.findings.map((g: any) => [g.severity, g.code, g.path, g.line, g.column, g.rule]),
        ]),
      );
    if (f(r.body) !== f(was))
      note(`${label} new run ${wf} doc ${old.doc}: findings differ\n   old ${f(was)}\n   new ${f(r.body)}`);
  }
  const a = await call("POST", "/api/v1/orgs/beta/workflows/b/runs/", {
    token: tokens.alice,
    body: "{}",
    headers: { "content-type": "application/json", prefer: "respond-async" },
  });
  if (a.status !== 202) note(`${label} async run in beta: ${a.status}`);
  for (let i = 0; i < 300 && received.slice(before).filter((x) => x.path === "/all").length < newRuns; i++)
    await Bun.sleep(100);
  const got = received.slice(before).filter((x) => x.path === "/all");
  if (got.length < newRuns) note(`${label} webhook deliveries after upgrade: ${got.length}/${newRuns}`);
  for (const d of received.slice(before)) {
    const key = Buffer.from(secrets[d.path]!.replace(/^whsec_/, ""), "base64");
    const sig = createHmac("sha256", key).update(`${d.id}.${d.ts}.${d.body}`).digest("base64");
    if (!d.sig.split(" ").includes(`v1,${sig}`))
      note(`${label} delivery ${d.id} to ${d.path}: signature does not verify with the old secret`);
  }
  const ping = await call("POST", `/api/v1/orgs/acme/webhooks/${hooks[0].id}/ping/`, { token: T });
  if (ping.status >= 300) note(`${label} ping: ${ping.status} ${JSON.stringify(ping.body)}`);
  await server.stop();
  const v = cli(NEW, ["audit", "verify", ...dbArgs()]);
  console.log(
    `${label} audit verify: exit ${v.code} ${v.out.trim().split("\n").at(-1)} ${v.err.trim().slice(0, 300)}`,
  );
  if (v.code !== 0) note(`${label} audit verify exit ${v.code}: ${v.out} ${v.err}`);
}

await verify(`${sha}/${backend}`);
if (backend === "sqlite") {
  const target = await newPgDb("copied");
  const c = cli(NEW, ["db", "copy", "--from", dataDir, "--to", target]);
  console.log(
    `db copy: exit ${c.code} ${c.out.trim().split("\n").slice(-3).join(" | ")} ${c.err.trim().slice(0, 500)}`,
  );
  if (c.code !== 0) note(`db copy exit ${c.code}: ${c.err}`);
  else {
    pgUrl = target;
    await verify(`${sha}/copied-to-pg`);
  }
}
receiver.stop(true);
cluster?.stop();
console.log(`\n${problems.length} problems (old deliveries ${oldReceived}); out ${out}`);
for (const p of problems) console.log(` - ${p}`);
process.exit(0);
