// Soak of the built binary (docs/benchmarks.md, "Soak"): a mixed load written here (sync and async
// runs of every validator, idempotency keys always new, tokens, orgs, users and workflow versions
// created and removed, web sessions, sign-in failures from many addresses, list pages, errors of
// every kind, clients that go away mid-request, webhooks to a local receiver, one of them
// failing, a caller over its rate limit), for `--rounds` stretches of `--minutes`, each followed
// by `--quiet` seconds without load. Every `--sample` seconds a line of JSON (to `--out` and
// stdout): the process's RSS, threads and open fds, the database's size, /metrics' series. What it
// looks for is what grows with the number of distinct keys seen rather than with the load's rate:
// compare the quiet plateaus of the rounds with each other and with the start. It starts the
// server from a temp dir (SQLite) or on a throwaway PostgreSQL server (test/helpers/pg-cluster.ts).
//   bun scripts/soak.ts [--backend sqlite|postgres] [--minutes 25] [--rounds 1] [--quiet 90]
//     [--sample 30] [--concurrency 8] [--bin dist/assay] [--out /tmp/soak-sqlite.jsonl]
//     [--sch-configs 0]
// --sch-configs W adds an operation of weight W (the others' weights sum to 106) that saves and
// runs a new Schematron config of 40 asserts, each a distinct XPath expression: fontoxpath keeps
// every expression it compiled, so the workers' memory grows until the pool replaces them
// (WORKER_MAX_RETAINED, 20,000 expressions a worker; docs/execution.md). `sch_configs` in the
// samples counts them.
import {
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  mkdtempSync,
  rmSync,
  appendFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startPgCluster } from "../test/helpers/pg-cluster.ts";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const BACKEND = arg("backend", "sqlite");
const MINUTES = Number(arg("minutes", "25"));
const QUIET_S = Number(arg("quiet", "90"));
const ROUNDS = Number(arg("rounds", "1"));
const SAMPLE_S = Number(arg("sample", "30"));
const CONCURRENCY = Number(arg("concurrency", "8"));
const BIN = resolve(arg("bin", "dist/assay"));
const OUT = arg("out", join(tmpdir(), `soak-${BACKEND}.jsonl`));
const SCH_CONFIGS = Number(arg("sch-configs", "0"));

const dir = mkdtempSync(join(tmpdir(), "assay-soak-"));
const dataDir = join(dir, "data");
let pg: Awaited<ReturnType<typeof startPgCluster>> | null = null;
let databaseUrl = "";
if (BACKEND === "postgres") {
  pg = await startPgCluster();
  Bun.spawnSync(["psql", `${pg.baseUrl}postgres`, "-c", "CREATE DATABASE soak"]);
  databaseUrl = `${pg.baseUrl}soak`;
}
const where = databaseUrl ? ["--database-url", databaseUrl] : ["--data-dir", dataDir];

// ---- a webhook receiver: /ok answers 200, /fail 500, /slow after 2 s ----
let hooks = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    await req.text();
    hooks++;
    const p = new URL(req.url).pathname;
    if (p === "/fail") return new Response("no", { status: 500 });
    if (p === "/slow") await Bun.sleep(2000);
    return new Response("ok");
  },
});
const hookBase = `http://127.0.0.1:${receiver.port}`;

const init = Bun.spawnSync([BIN, "init", "--org", "soak", "--admin", "root", ...where], { cwd: dir });
if (init.exitCode !== 0) throw new Error(`init: ${init.stderr}`);
const ROOT = init.stdout.toString().trim().split("\n").at(-1)!;

const env = {
  ...process.env,
  ASSAY_TRUST_PROXY: "true",
  ASSAY_WEBHOOK_ALLOW_PRIVATE: "true",
  ASSAY_WEBHOOK_RETRY_DELAYS_MS: "200,400",
  ASSAY_WEBHOOK_TIMEOUT_MS: "1000",
  ASSAY_LOG_LEVEL: "warn",
  ASSAY_MAX_BODY_BYTES: "65536",
  ASSAY_METRICS_ENABLED: "true",
};
const proc = Bun.spawn([BIN, "serve", "--port", "0", ...where], {
  cwd: dir,
  env,
  stdout: "pipe",
  stderr: "pipe",
});
const reader = proc.stdout.getReader();
let banner = "";
while (!/listening on (http:\/\/\S+)/.test(banner)) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`serve exited: ${banner} ${await new Response(proc.stderr).text()}`);
  banner += new TextDecoder().decode(value);
}
reader.releaseLock();
void proc.stdout.pipeTo(new WritableStream());
const errLines: string[] = [];
// The server's log lines (warnings and worse), the first 200 of them, shown at the end.
void proc.stderr.pipeTo(
  new WritableStream({
    write(chunk) {
      for (const l of new TextDecoder().decode(chunk).split("\n"))
        if (l && errLines.length < 200) errLines.push(l.slice(0, 400));
    },
  }),
);
const BASE = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
const PID = proc.pid;
const port = Number(new URL(BASE).port);

// ---- HTTP ----
const stats = new Map<string, number>();
const count = (k: string) => stats.set(k, (stats.get(k) ?? 0) + 1);
/** The fields of answers the load reads again. */
type Body = { id?: string | number; token?: string; next?: string | null } | null;
type Res = { status: number; json: Body; headers: Headers };
async function api(
  method: string,
  path: string,
  o: {
    token?: string;
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    ip?: string;
    tag?: string;
  } = {},
): Promise<Res> {
  const headers: Record<string, string> = { "x-forwarded-for": o.ip ?? "10.0.0.1", ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | undefined = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers["content-type"] ??= "application/json";
  }
  try {
    const r = await fetch(`${BASE}${path}`, { method, headers, body });
    const text = await r.text();
    let json: Body = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (the web app's pages): nothing to read again
    }
    count(`${o.tag ?? method} ${r.status}`);
    if (r.status >= 500) console.error(`5xx ${method} ${path} ${r.status} ${text.slice(0, 300)}`);
    return { status: r.status, json, headers: r.headers };
  } catch {
    count(`${o.tag ?? method} fetch-error`);
    return { status: 0, json: null, headers: new Headers() };
  }
}
const must = async (p: Promise<Res>, want: number, what: string) => {
  const r = await p;
  if (r.status !== want || !r.json) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
};
const rnd = (n: number) => Math.floor(Math.random() * n);
const pick = <T>(xs: T[]): T => xs[rnd(xs.length)]!;
let serial = 0;
const uniq = () => `${Date.now().toString(36)}${(serial++).toString(36)}`;

// ---- fixtures: one workflow per validator kind ----
const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const SCH = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern><sch:rule context="line">
    <sch:assert id="QTY" test="xs:decimal(@qty) gt 0">Line <sch:value-of select="@sku"/> has quantity <sch:value-of select="@qty"/>.</sch:assert>
    <sch:report id="TOK" test="count(tokenize(@sku, '-')) gt 2">sku has dashes</sch:report>
  </sch:rule></sch:pattern></sch:schema>`;
const JSON_SCHEMA = {
  type: "object",
  required: ["id", "qty"],
  properties: { id: { type: "string", pattern: "^o-[0-9]+$" }, qty: { type: "integer", minimum: 1 } },
};
const KINDS = {
  json: {
    wf: {
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "json_schema", config: { schema: JSON_SCHEMA } }],
    },
    ct: "application/json",
    doc: (ok: boolean) => JSON.stringify({ id: ok ? `o-${rnd(1e6)}` : "x", qty: ok ? 1 + rnd(9) : 0 }),
  },
  yaml: {
    wf: {
      allowed_file_types: ["YAML"],
      steps: [{ name: "s", validator: "json_schema", config: { schema: JSON_SCHEMA } }],
    },
    ct: "application/yaml",
    doc: (ok: boolean) => (ok ? `id: o-${rnd(1e6)}\nqty: ${1 + rnd(9)}\n` : "id: x\nqty: [1\n"),
  },
  xsd: {
    wf: {
      allowed_file_types: ["XML"],
      steps: [{ name: "s", validator: "xml_schema", config: { schema_type: "xsd", schema: XSD } }],
    },
    ct: "application/xml",
    doc: (ok: boolean) => `<r>${"<a>1</a>".repeat(1 + rnd(20))}${ok ? "" : "<a>x</a>"}</r>`,
  },
  csv: {
    wf: {
      allowed_file_types: ["CSV"],
      steps: [
        {
          name: "s",
          validator: "csv_table",
          config: {
            schema: {
              fields: [
                { name: "id", type: "integer" },
                { name: "name", type: "string", constraints: { pattern: "^[a-z]+$" } },
              ],
            },
          },
        },
      ],
    },
    ct: "text/csv",
    doc: (ok: boolean) =>
      `id,name\n${Array.from({ length: 1 + rnd(30) }, (_, i) => `${i},abc`).join("\n")}\n${ok ? "" : "x,ABC\n"}`,
  },
  cel: {
    wf: {
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "s",
          validator: "assertions",
          config: {
            rules: [
              { id: "qty", expr: "data.qty > 0 && data.id.matches('^o-')", message: "bad {{ data.qty }}" },
            ],
          },
        },
      ],
    },
    ct: "application/json",
    doc: (ok: boolean) => JSON.stringify({ id: ok ? "o-1" : "z", qty: ok ? 3 : -1 }),
  },
  text: {
    wf: {
      allowed_file_types: ["TEXT"],
      steps: [
        {
          name: "s",
          validator: "text_rules",
          config: { max_line_length: 80, patterns: [{ regex: "TODO", must: "not_match", message: "todo" }] },
        },
      ],
    },
    ct: "text/plain",
    doc: (ok: boolean) => `line one\n${ok ? "fine" : "TODO fix"}\n`,
  },
  sch: {
    wf: {
      allowed_file_types: ["XML"],
      steps: [{ name: "s", validator: "schematron", config: { schema: SCH } }],
    },
    ct: "application/xml",
    doc: (ok: boolean) => `<order><line sku="a-b" qty="2"/><line sku="c-d-e" qty="${ok ? 1 : 0}"/></order>`,
  },
};
type Kind = keyof typeof KINDS;
const KIND_NAMES = Object.keys(KINDS) as Kind[];

const PASSWORD = "Soak-Pass-2026-zebra!";
for (const k of KIND_NAMES)
  await must(
    api("POST", "/api/v1/orgs/soak/workflows/", {
      token: ROOT,
      body: { slug: `k-${k}`, name: k, ...KINDS[k].wf },
    }),
    201,
    `workflow ${k}`,
  );

async function login(username: string, password = PASSWORD, ip = "10.0.0.1") {
  const r = await fetch(`${BASE}/api/v1/auth/login/`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ username, password }),
  });
  count(`login ${r.status}`);
  const j = (await r.json()) as { csrf_token?: string };
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { status: r.status, cookie, csrf: j.csrf_token ?? "" };
}

async function newUser(name: string, role: string, org = "soak") {
  await must(
    api("POST", "/api/v1/admin/users/", { token: ROOT, body: { username: name, password: PASSWORD } }),
    201,
    `user ${name}`,
  );
  await must(
    api("POST", `/api/v1/orgs/${org}/members/`, { token: ROOT, body: { username: name, role } }),
    201,
    `member ${name}`,
  );
  const s = await login(name);
  const t = await fetch(`${BASE}/api/v1/users/me/tokens/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      cookie: s.cookie,
      "x-csrf-token": s.csrf,
      "x-forwarded-for": "10.0.0.1",
    },
    body: JSON.stringify({ name: "main" }),
  });
  const tj = (await t.json()) as { token: string };
  if (t.status !== 201) throw new Error(`token for ${name}: ${t.status} ${JSON.stringify(tj)}`);
  return tj.token;
}
const workers: { name: string; token: string }[] = [];
for (let i = 0; i < 6; i++) workers.push({ name: `w${i}`, token: await newUser(`w${i}`, "admin") });
const limited = await newUser("limited", "viewer");
const viewer = await newUser("viewer", "viewer");

// Webhooks: one answering 200, one 500 (re-activated when the server deactivates it), one slow.
const hookIds: (string | number | undefined)[] = [];
for (const p of ["ok", "fail", "slow"])
  hookIds.push(
    (
      await must(
        api("POST", "/api/v1/orgs/soak/webhooks/", {
          token: ROOT,
          body: { url: `${hookBase}/${p}`, events: ["run.completed"] },
        }),
        201,
        "webhook",
      )
    ).id,
  );

// ---- the operations ----
const runIds: string[] = [];
const remember = (id?: string | number) => {
  if (typeof id !== "string") return;
  if (runIds.length < 500) runIds.push(id);
  else runIds[rnd(500)] = id;
};
const w = () => pick(workers);

async function runOne(async: boolean, kind = pick(KIND_NAMES), token = w().token) {
  const k = KINDS[kind];
  const headers: Record<string, string> = {
    "content-type": k.ct,
    prefer: async ? "respond-async" : "wait=30",
  };
  if (Math.random() < 0.4) headers["idempotency-key"] = crypto.randomUUID();
  const doc = k.doc(Math.random() < 0.7);
  const r = await api("POST", `/api/v1/orgs/soak/workflows/k-${kind}/runs/`, {
    token,
    raw: doc,
    headers,
    tag: `run-${async ? "async" : "sync"}-${kind}`,
  });
  remember(r.json?.id);
  // A retry with the same key: replayed, not a new run.
  if (headers["idempotency-key"] && Math.random() < 0.3)
    await api("POST", `/api/v1/orgs/soak/workflows/k-${kind}/runs/`, {
      token,
      raw: doc,
      headers,
      tag: "run-retry",
    });
}

async function tokenChurn() {
  const u = w();
  const t = await api("POST", "/api/v1/users/me/tokens/", {
    token: u.token,
    body: { name: `t-${uniq()}`, expires_in_days: 1 },
    tag: "token-create",
  });
  if (t.status !== 201 || !t.json?.token) return;
  const { token, id } = t.json;
  await api("GET", "/api/v1/users/me/", { token, tag: "token-use" });
  await runOne(false, pick(KIND_NAMES), token);
  await api("DELETE", `/api/v1/users/me/tokens/${id}/`, { token: u.token, tag: "token-revoke" });
  await api("GET", "/api/v1/users/me/", { token, tag: "token-revoked-use" });
}

let orgs = 0;
async function orgChurn() {
  const slug = `org-${uniq()}`;
  orgs++;
  const o = await api("POST", "/api/v1/admin/orgs/", {
    token: ROOT,
    body: { org_slug: slug, name: slug },
    tag: "org-create",
  });
  if (o.status !== 201) return;
  await api("POST", `/api/v1/orgs/${slug}/workflows/`, {
    token: ROOT,
    body: { slug: "j", name: "j", ...KINDS.json.wf },
    tag: "org-wf",
  });
  await api("POST", `/api/v1/orgs/${slug}/workflows/j/runs/`, {
    token: ROOT,
    raw: KINDS.json.doc(true),
    headers: { "content-type": "application/json" },
    tag: "org-run",
  });
  await api("GET", `/api/v1/orgs/${slug}/runs/?limit=5`, { token: ROOT, tag: "org-list" });
  if (Math.random() < 0.7) await api("DELETE", `/api/v1/orgs/${slug}/`, { token: ROOT, tag: "org-delete" });
}

let versions = 0;
async function workflowChurn() {
  const u = w();
  const slug = `c-${uniq()}`;
  const n = serial;
  // Each version a distinct config: compiled validators and regex caches see new keys.
  const def = (v: number) => ({
    name: slug,
    allowed_file_types: ["JSON", "XML"],
    steps: [
      {
        name: "js",
        validator: "json_schema",
        config: {
          schema: {
            type: "object",
            properties: {
              id: { type: "string", pattern: `^o-[0-9]{${1 + (n % 50)},${60 + v}}$`, maxLength: 100 + n + v },
            },
          },
        },
      },
      {
        name: "cel",
        validator: "assertions",
        config: {
          rules: [
            {
              id: "r",
              expr: `!has(data.id) || data.id.matches('^o-[0-9]{1,${(n % 900) + v + 1}}$')`,
              message: "m",
            },
          ],
        },
      },
      {
        name: "tx",
        validator: "text_rules",
        config: { patterns: [{ regex: `X{${(n % 997) + v + 1}}`, must: "not_match", message: "x" }] },
      },
    ],
  });
  const c = await api("POST", `/api/v1/orgs/soak/workflows/`, {
    token: u.token,
    body: { slug, ...def(0) },
    tag: "wf-create",
  });
  if (c.status !== 201) return;
  for (let v = 1; v <= 3; v++) {
    await api("POST", `/api/v1/orgs/soak/workflows/${slug}/runs/`, {
      token: u.token,
      raw: KINDS.json.doc(v !== 2),
      headers: { "content-type": "application/json" },
      tag: "wf-run",
    });
    await api("PUT", `/api/v1/orgs/soak/workflows/${slug}/`, {
      token: u.token,
      body: { slug, ...def(v) },
      tag: "wf-put",
    });
    versions++;
  }
  if (Math.random() < 0.3) {
    const x =
      Math.random() < 0.5
        ? SCH.replace("gt 2", `gt ${2 + (n % 500)}`)
        : XSD.replace('type="xs:int"', `type="xs:int" maxOccurs="${1 + (n % 500)}"`).replace(
            ' maxOccurs="unbounded"',
            "",
          );
    const step =
      x === SCH || x.includes("sch:")
        ? { name: "x", validator: "schematron", config: { schema: x } }
        : { name: "x", validator: "xml_schema", config: { schema_type: "xsd", schema: x } };
    const r = await api("PUT", `/api/v1/orgs/soak/workflows/${slug}/`, {
      token: u.token,
      body: { slug, name: slug, allowed_file_types: ["XML"], steps: [step] },
      tag: "wf-put-xml",
    });
    if (r.status === 200)
      await api("POST", `/api/v1/orgs/soak/workflows/${slug}/runs/`, {
        token: u.token,
        raw: KINDS.sch.doc(true),
        headers: { "content-type": "application/xml" },
        tag: "wf-run-xml",
      });
  }
  await api("GET", `/api/v1/orgs/soak/workflows/${slug}/versions/`, { token: u.token, tag: "wf-versions" });
  if (Math.random() < 0.8)
    await api("DELETE", `/api/v1/orgs/soak/workflows/${slug}/`, { token: u.token, tag: "wf-delete" });
}

let sessions = 0;
async function session() {
  const u = w();
  sessions++;
  const s = await login(u.name, PASSWORD, `10.7.${rnd(250)}.${rnd(250)}`);
  if (s.status !== 200) return;
  const h = { cookie: s.cookie, "x-forwarded-for": "10.0.0.1" };
  for (const p of [
    "/api/v1/auth/session/",
    "/api/v1/orgs/soak/runs/?limit=5",
    "/app/",
    "/api/v1/orgs/soak/workflows/",
  ]) {
    const r = await fetch(`${BASE}${p}`, { headers: h });
    await r.arrayBuffer();
    count(`session-get ${r.status}`);
  }
  const r = await fetch(`${BASE}/api/v1/orgs/soak/workflows/k-json/runs/`, {
    method: "POST",
    headers: { ...h, "x-csrf-token": s.csrf, "content-type": "application/json" },
    body: KINDS.json.doc(true),
  });
  await r.arrayBuffer();
  count(`session-run ${r.status}`);
  if (Math.random() < 0.6) {
    const o = await fetch(`${BASE}/api/v1/auth/logout/`, {
      method: "POST",
      headers: { ...h, "x-csrf-token": s.csrf },
    });
    await o.arrayBuffer();
    count(`logout ${o.status}`);
  }
}

async function badLogins() {
  // Distinct usernames and addresses: the sign-in limiter's keys.
  for (let i = 0; i < 3; i++)
    await login(`nobody-${uniq()}`, "wrong-password", `10.${rnd(250)}.${rnd(250)}.${rnd(250)}`);
  await login("viewer", "wrong-password", `10.9.${rnd(250)}.${rnd(250)}`);
}

async function lists() {
  const u = pick([...workers.map((x) => x.token), viewer]);
  let path: string | null = `/api/v1/orgs/soak/runs/?limit=${1 + rnd(20)}`;
  for (let page = 0; path && page < 4; page++) {
    const r = await api("GET", path, { token: u, tag: "list-runs" });
    const next = r.json?.next;
    path = next ? next.replace(/^https?:\/\/[^/]+/, "") : null;
  }
  if (runIds.length) {
    const id = pick(runIds);
    await api("GET", `/api/v1/orgs/soak/runs/${id}/`, { token: u, tag: "get-run" });
    if (Math.random() < 0.3)
      await api("GET", `/api/v1/orgs/soak/runs/${id}/content/`, { token: u, tag: "get-content" });
  }
  await api("GET", "/api/v1/orgs/soak/workflows/?limit=10", { token: u, tag: "list-wf" });
  await api("GET", "/api/v1/users/me/tokens/", { token: w().token, tag: "list-tokens" });
  await api("GET", `/api/v1/orgs/soak/webhooks/${pick(hookIds)}/deliveries/?limit=10`, {
    token: ROOT,
    tag: "list-deliveries",
  });
  if (Math.random() < 0.2)
    await api("GET", "/api/v1/admin/orgs/?limit=50", { token: ROOT, tag: "list-orgs" });
  if (Math.random() < 0.2)
    await api("GET", "/api/v1/orgs/soak/audit/?limit=20", { token: ROOT, tag: "list-audit" });
}

async function errors() {
  const ip = `10.${1 + rnd(250)}.${rnd(250)}.${rnd(250)}`;
  await api("GET", "/api/v1/users/me/", { token: `assay_${crypto.randomUUID()}`, ip, tag: "bad-token" });
  await api("GET", `/api/v1/nope/${uniq()}/`, { token: w().token, tag: "404-path" });
  await api("GET", `/api/v1/orgs/soak/runs/${crypto.randomUUID()}/`, { token: w().token, tag: "404-run" });
  await api("GET", `/api/v1/orgs/no-${uniq()}/workflows/`, { token: w().token, tag: "404-org" });
  await api("POST", "/api/v1/orgs/soak/workflows/", {
    token: w().token,
    raw: "x".repeat(70_000),
    headers: { "content-type": "application/json" },
    tag: "413",
  });
  await api("POST", "/api/v1/orgs/soak/workflows/", {
    token: w().token,
    raw: "{bad json",
    headers: { "content-type": "application/json" },
    tag: "400-json",
  });
  await api("PATCH", "/api/v1/users/me/", { token: w().token, body: {}, tag: "405" });
  await api("POST", "/api/v1/orgs/soak/workflows/k-json/runs/", {
    token: viewer,
    raw: "{}",
    headers: { "content-type": "application/json" },
    tag: "403-viewer",
  });
}

async function disconnects() {
  // A run start whose client goes away mid-body, and one aborted while it waits.
  await new Promise<void>((done) => {
    const s = connect(port, "127.0.0.1", () => {
      s.write(
        `POST /api/v1/orgs/soak/workflows/k-json/runs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${w().token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"id":"o-1",`,
      );
      setTimeout(() => {
        s.destroy();
        done();
      }, 20);
    });
    s.on("error", () => done());
  });
  count("disconnect-body");
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), 2 + rnd(10));
  try {
    await fetch(`${BASE}/api/v1/orgs/soak/workflows/k-sch/runs/`, {
      method: "POST",
      signal: ac.signal,
      headers: {
        authorization: `Bearer ${w().token}`,
        "content-type": "application/xml",
        "x-forwarded-for": "10.0.0.1",
      },
      body: KINDS.sch.doc(true),
    }).then((r) => r.arrayBuffer());
    count("disconnect-abort finished");
  } catch {
    count("disconnect-abort aborted");
  } finally {
    clearTimeout(t);
  }
}

async function rateLimited() {
  // One caller far over its budget: most of these are 429.
  await Promise.all(
    Array.from({ length: 150 }, () => api("GET", "/api/v1/users/me/", { token: limited, tag: "limited" })),
  );
}

async function userChurn() {
  const name = `u-${uniq()}`;
  const c = await api("POST", "/api/v1/admin/users/", {
    token: ROOT,
    body: { username: name, password: PASSWORD },
    tag: "user-create",
  });
  if (c.status !== 201) return;
  await api("POST", "/api/v1/orgs/soak/members/", {
    token: ROOT,
    body: { username: name, role: "executor" },
    tag: "user-member",
  });
  const s = await login(name);
  if (s.status === 200) {
    const r = await fetch(`${BASE}/api/v1/users/me/`, {
      headers: { cookie: s.cookie, "x-forwarded-for": "10.0.0.1" },
    });
    await r.arrayBuffer();
  }
  await api("DELETE", `/api/v1/admin/users/${name}/`, { token: ROOT, tag: "user-delete" });
}

async function webhookUpkeep() {
  // The server deactivates the failing endpoint after its failures: turn it on again.
  await api("PATCH", `/api/v1/orgs/soak/webhooks/${hookIds[1]}/`, {
    token: ROOT,
    body: { is_active: true },
    tag: "hook-reactivate",
  });
  await api("POST", `/api/v1/orgs/soak/webhooks/${pick(hookIds)}/ping/`, { token: ROOT, tag: "hook-ping" });
}

let schConfigs = 0;
async function schematronConfig() {
  const u = w();
  const slug = `x-${uniq()}`;
  const n = serial;
  // 40 asserts whose expressions no other config has: 40 new entries in fontoxpath's cache.
  const asserts = Array.from(
    { length: 40 },
    (_, i) => `<sch:assert id="A${i}" test="count(line) lt ${n * 40 + i + 1000}">a</sch:assert>`,
  ).join("");
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="order">${asserts}</sch:rule></sch:pattern></sch:schema>`;
  const c = await api("POST", "/api/v1/orgs/soak/workflows/", {
    token: u.token,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["XML"],
      steps: [{ name: "s", validator: "schematron", config: { schema } }],
    },
    tag: "sch-create",
  });
  if (c.status !== 201) return;
  const r = await api("POST", `/api/v1/orgs/soak/workflows/${slug}/runs/`, {
    token: u.token,
    raw: KINDS.sch.doc(true),
    headers: { "content-type": "application/xml", prefer: "wait=30" },
    tag: "sch-run",
  });
  if (r.status < 300) schConfigs++;
  await api("DELETE", `/api/v1/orgs/soak/workflows/${slug}/`, { token: u.token, tag: "sch-delete" });
}

const OPS: [number, () => Promise<unknown>][] = [
  ...(SCH_CONFIGS > 0 ? [[SCH_CONFIGS, schematronConfig] as [number, () => Promise<unknown>]] : []),
  [30, () => runOne(false)],
  [15, () => runOne(true)],
  [8, tokenChurn],
  [3, orgChurn],
  [5, workflowChurn],
  [6, session],
  [3, badLogins],
  [12, lists],
  [6, errors],
  [3, disconnects],
  [2, rateLimited],
  [2, userChurn],
  [1, webhookUpkeep],
];
const TOTAL = OPS.reduce((t, [n]) => t + n, 0);
function op() {
  let x = rnd(TOTAL);
  for (const [n, f] of OPS) {
    if (x < n) return f;
    x -= n;
  }
  return OPS[0]![1];
}

// ---- sampling ----
const dbFiles = () => {
  if (databaseUrl) return {};
  const out: Record<string, number> = {};
  for (const f of readdirSync(dataDir)) out[f] = statSync(join(dataDir, f)).size;
  return out;
};
async function pgSize() {
  if (!databaseUrl) return undefined;
  const p = Bun.spawnSync(["psql", databaseUrl, "-tAc", "SELECT pg_database_size('soak')"]);
  return Number(p.stdout.toString().trim());
}
function proc_() {
  const s = readFileSync(`/proc/${PID}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return {
    rss_mb: +(kb("VmRSS") / 1024).toFixed(1),
    hwm_mb: +(kb("VmHWM") / 1024).toFixed(1),
    threads: kb("Threads"),
    fds: readdirSync(`/proc/${PID}/fd`).length,
  };
}
let phase = "load1";
let done = 0;
const t0 = Date.now();
async function sample() {
  const m = await fetch(`${BASE}/metrics`)
    .then((r) => r.text())
    .catch(() => "");
  const series = m.split("\n").filter((l) => l && !l.startsWith("#")).length;
  const s = {
    t: Math.round((Date.now() - t0) / 1000),
    phase,
    ops: done,
    hooks,
    orgs,
    versions,
    sessions,
    sch_configs: schConfigs,
    ...proc_(),
    metrics_series: series,
    db: dbFiles(),
    pg_bytes: await pgSize(),
  };
  appendFileSync(OUT, `${JSON.stringify(s)}\n`);
  console.log(JSON.stringify(s));
}
writeFileSync(OUT, "");
await sample();
const sampler = setInterval(() => void sample(), SAMPLE_S * 1000);

for (let round = 1; round <= ROUNDS; round++) {
  phase = `load${round}`;
  const end = Date.now() + MINUTES * 60_000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        try {
          await op()();
        } catch (e) {
          count(`op-error ${(e as Error).message.slice(0, 80)}`);
        }
        done++;
      }
    }),
  );
  phase = `quiet${round}`;
  await sample();
  await Bun.sleep(QUIET_S * 1000);
  await sample();
}
clearInterval(sampler);
console.log(JSON.stringify(Object.fromEntries([...stats].sort()), null, 1));
console.log("stderr lines:", errLines.length, errLines.slice(0, 20).join("\n"));
proc.kill("SIGTERM");
await proc.exited;
receiver.stop(true);
pg?.stop();
rmSync(dir, { recursive: true, force: true });
