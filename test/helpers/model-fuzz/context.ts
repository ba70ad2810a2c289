// What the model-based fuzzer's operations (ops-*.ts) share: the seeded choices, the reference
// model and its setup, the HTTP client that checks every answer (no 5xx, the OpenAPI schema),
// the paging walker, the audit log's check, and the choosers of actors, orgs and workflows.
// MODEL_FUZZ_TRACE=FILE writes every request of a failing sequence to FILE.
import type { Receiver } from "../webhook-receiver.ts";
import type { TestServer } from "../server.ts";
import { random } from "../random.ts";
import { type MOrg, type MRun, type MToken, type MUser, Model, ROLES, type Role, rank } from "./model.ts";
import { schemaChecker } from "./schema-check.ts";

// biome-ignore lint/suspicious/noExplicitAny: answers are JSON of every shape, checked by the schema
export type Json = any;

export interface Res {
  status: number;
  json: Json;
  headers: Headers;
}
export interface Actor {
  user: MUser;
  token: MToken;
}
export interface AuditExpect {
  action: string;
  org: string | null;
  actor: string | null;
}

export const CODES: Record<number, string> = {
  401: "authentication_required",
  403: "permission_denied",
  404: "not_found",
  412: "precondition_failed",
};
export const SLUGS = ["w1", "w2", "w3", "orders", "a-b", "a_b", "ab", "z9"];
export const OTHER_USERS = ["alice", "bob", "carol", "dave", "erin"];
export const SYNTAX = { name: "syntax", validator: "syntax", config: {} };
export const SCHEMA = { name: "object", validator: "json_schema", config: { schema: { type: "object" } } };

export class FuzzFailure extends Error {}

/** Everything the operations share: the model, the client, the checks and the choosers. */
export async function createContext(
  s: TestServer,
  receiver: Receiver,
  opts: { seed: number; steps: number; log?: (line: string) => void },
) {
  const rnd = random(opts.seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: T[]): T => xs[int(xs.length)]!;
  const chance = (p: number) => rnd() < p;
  const m = new Model();
  const trace: string[] = [];
  const statuses: Record<string, number> = {};
  let auditSeq = 0;
  const st = {
    step: 0,
    requests: 0,
    /** The audit entries the current step should write. */
    expected: [] as AuditExpect[],
    /** A burst's entries may land in any order. */
    auditUnordered: false,
    /** The run held by a gate (holdRun), at most one. */
    heldRun: null as MRun | null,
  };
  const doc = await (await fetch(`${s.url}/api/v1/openapi.json`)).json();
  const checkSchema = schemaChecker(doc);

  const full: string[] = [];
  const fail = (why: string): never => {
    full.push(...trace);
    if (process.env.MODEL_FUZZ_TRACE)
      require("node:fs").writeFileSync(process.env.MODEL_FUZZ_TRACE, `${full.join("\n")}\n${why}\n`);
    const tail = trace.slice(-40).join("\n");
    throw new FuzzFailure(`seed ${opts.seed}, step ${st.step}: ${why}\n--- last requests ---\n${tail}`);
  };
  const check = (ok: unknown, why: string) => {
    if (!ok) fail(why);
  };

  async function http(
    who: Actor | string | null,
    method: string,
    path: string,
    o: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Res> {
    const headers: Record<string, string> = { ...o.headers };
    const secret = typeof who === "string" ? who : who?.token.secret;
    if (secret) headers.authorization = `Bearer ${secret}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const url = path.startsWith("http") ? path : s.url + path;
    const res = await fetch(url, { method, headers, body });
    st.requests++;
    const text = await res.text();
    let json: Json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    const p = new URL(url).pathname;
    const label =
      typeof who === "string"
        ? "(monitor)"
        : who
          ? `${who.user.name}#${who.token.id}${who.token.revoked ? "(revoked)" : ""}`
          : "anon";
    if (typeof who !== "string")
      trace.push(
        `#${st.step} ${label} ${method} ${p}${new URL(url).search}${body ? ` ${body.slice(0, 200)}` : ""}${o.headers ? ` ${JSON.stringify(o.headers)}` : ""} -> ${res.status} ${text.slice(0, 160)}`,
      );
    if (typeof who !== "string")
      statuses[`${method} ${res.status}`] = (statuses[`${method} ${res.status}`] ?? 0) + 1;
    if (res.status >= 500) fail(`${method} ${p} answered ${res.status}: ${text.slice(0, 500)}`);
    const problem = checkSchema(method, p, res.status, json);
    if (problem) fail(`${method} ${p} ${res.status}: body does not match the OpenAPI schema: ${problem}`);
    return { status: res.status, json, headers: res.headers };
  }

  /** The answer's status is `want` (or one of them); an error's code is the one its status implies. */
  function expectStatus(r: Res, want: number | number[], code?: string) {
    const ws = Array.isArray(want) ? want : [want];
    check(
      ws.includes(r.status),
      `expected ${ws.join("|")}, got ${r.status} ${JSON.stringify(r.json)?.slice(0, 300)}`,
    );
    if (r.status >= 400) {
      const c = code ?? CODES[r.status];
      if (c) check(r.json?.code === c, `expected code ${c}, got ${r.json?.code}`);
      check(r.json?.status === r.status, "error object's status differs from the answer's");
    }
  }
  /**
   * If-Match / If-None-Match for an unsafe request to a resource without an ETag (all but a
   * workflow; docs/api.md): none most of the time; else a false one (If-Match with a tag list, or
   * If-None-Match: *), a 412 once the target exists and the answer without it would be a 2xx (a
   * 401/403/404 and a 409 from the target's state win, RFC 9110 §13.2.1), or a true one
   * (If-Match: *, If-None-Match with a tag list) that changes nothing.
   */
  function precondition(): { headers?: Record<string, string>; fails: boolean } {
    const x = rnd();
    if (x < 0.06) return { headers: { "if-match": pick(['"1"', '"x", "y"', 'W/"2"']) }, fails: true };
    if (x < 0.12) return { headers: { "if-none-match": "*" }, fails: true };
    if (x < 0.15) return { headers: { "if-match": "*" }, fails: false };
    if (x < 0.18) return { headers: { "if-none-match": '"0"' }, fails: false };
    return { fails: false };
  }
  /** `anyone`: by whichever user (a burst's senders). */
  const audit = (action: string, org: string | null, actor: Actor | null, anyone = false): void => {
    st.expected.push({ action, org, actor: anyone ? "*" : (actor?.user.name ?? null) });
  };

  // ----- setup: users, orgs, memberships (before the audit head is read) -----
  const monitor = (await s.user("monitor", undefined, undefined, { is_admin: true })).token;
  const addUser = (name: string, isAdmin: boolean) => {
    const u: MUser = { name, isAdmin, tokens: [] };
    m.users.set(name, u);
    return u;
  };
  const root = addUser("root", true);
  root.tokens.push({ id: 0, secret: s.rootToken, revoked: false, name: "root-token" });
  for (const n of OTHER_USERS) addUser(n, false);
  const newOrg = (slug: string): MOrg => {
    const o: MOrg = {
      slug,
      name: slug.toUpperCase(),
      suspended: false,
      members: new Map(),
      workflows: new Map(),
      deletedWorkflows: new Map(),
      webhooks: new Map(),
      runs: new Map(),
    };
    m.orgs.set(slug, o);
    return o;
  };
  const acme = newOrg("acme");
  acme.members.set("root", "admin");
  const beta = newOrg("beta");
  await s.org("beta");
  const seedMember = async (u: string, org: MOrg, role: Role | undefined) => {
    const t = await s.user(u, role ? org.slug : undefined, role);
    m.users.get(u)!.tokens.push({ id: t.tokenId, secret: t.token, revoked: false, name: `${u}-token` });
    if (role) org.members.set(u, role);
  };
  await seedMember("alice", beta, "admin");
  for (const u of OTHER_USERS)
    for (const org of [acme, beta])
      if (!org.members.has(u) && chance(0.7)) await seedMember(u, org, pick(ROLES));
  for (const u of OTHER_USERS) if (!m.users.get(u)!.tokens.length) await seedMember(u, acme, undefined);
  const rootTok = await http({ user: root, token: root.tokens[0]! }, "GET", "/api/v1/users/me/");
  root.tokens[0]!.id = rootTok.json.token.id;

  async function auditHead(): Promise<number> {
    const r = await http(monitor, "GET", "/api/v1/admin/audit/?page_size=1");
    return r.json.results[0]?.seq ?? 0;
  }
  auditSeq = await auditHead();

  /** The entries written since the last step are exactly the expected ones. */
  async function checkAudit() {
    const got: Json[] = [];
    for (let page = 1; ; page++) {
      const r = await http(monitor, "GET", `/api/v1/admin/audit/?page_size=50&page=${page}`);
      const fresh = r.json.results.filter((e: Json) => e.seq > auditSeq);
      got.push(...fresh);
      if (fresh.length < r.json.results.length || !r.json.next) break;
    }
    got.reverse();
    const seen = got.map(
      (e, i) =>
        `${e.action}@${e.org_slug ?? "-"} by ${st.expected[i]?.actor === "*" ? "*" : (e.actor.username ?? e.actor.type)}`,
    );
    const want = st.expected.map((e) => `${e.action}@${e.org ?? "-"} by ${e.actor ?? "system"}`);
    if (st.auditUnordered) {
      seen.sort();
      want.sort();
    }
    check(
      JSON.stringify(seen) === JSON.stringify(want),
      `audit log: expected ${JSON.stringify(want)}, got ${JSON.stringify(seen)}`,
    );
    if (got.length) auditSeq = got[got.length - 1].seq;
  }

  // ----- choosing actors and targets -----
  const liveTokens = (u: MUser) => u.tokens.filter((t) => !t.revoked);
  const ghosts: MUser[] = [];
  function actor(u?: MUser): Actor {
    if (!u && ghosts.length && chance(0.02)) {
      const g = pick(ghosts);
      return { user: g, token: pick(g.tokens) };
    }
    u ??= pick([...m.users.values()]);
    const dead = u.tokens.filter((t) => t.revoked);
    const token = dead.length && chance(0.06) ? pick(dead) : pick(liveTokens(u));
    return { user: u, token };
  }
  /** Mostly a member of an active org with at least `min` there, else anyone anywhere. */
  function who(min: Role): { a: Actor; org: string } {
    const able = [...m.orgs.values()]
      .filter((o) => !o.suspended)
      .flatMap((o) =>
        [...o.members.entries()].filter(([, r]) => rank(r) >= rank(min)).map(([u]) => ({ u, org: o.slug })),
      );
    if (able.length && chance(0.7)) {
      const { u, org } = pick(able);
      return { a: actor(m.users.get(u)!), org };
    }
    const a = actor();
    return { a, org: orgFor(a) };
  }
  /** Mostly an org the user belongs to; sometimes another, or one that does not exist. */
  function orgFor(a: Actor): string {
    const mine = [...m.orgs.values()].filter((o) => o.members.has(a.user.name));
    if (chance(0.04)) return "nosuch";
    if (mine.length && chance(0.85)) return pick(mine).slug;
    return pick([...m.orgs.values()]).slug;
  }
  /** A workflow identifier in `org`: mostly one of its own, sometimes another org's or a deleted one. */
  function workflowIdent(org: MOrg | undefined): string {
    const own = org ? [...org.workflows.values()] : [];
    const roll = rnd();
    if (own.length && roll < 0.8) {
      const w = pick(own);
      return chance(0.5) ? w.slug : String(w.id);
    }
    const others = [...m.orgs.values()].filter((o) => o !== org).flatMap((o) => [...o.workflows.values()]);
    const deleted = org ? [...org.deletedWorkflows.entries()] : [];
    if (others.length && roll < 0.88) return String(pick(others).id);
    if (deleted.length && roll < 0.95) {
      const [id, slug] = pick(deleted);
      return chance(0.5) ? slug : String(id);
    }
    return pick(SLUGS);
  }
  const allRuns = () => [...m.orgs.values()].flatMap((o) => [...o.runs.values()]);

  function wfPath(org: string, ident: string) {
    return `/api/v1/orgs/${org}/workflows/${ident}/`;
  }

  // ----- paging -----
  /**
   * Walks a list page by page (random page size, following `next`), checking the envelope:
   * the same count on every page, `previous` pointing back, no duplicates, and returns the items.
   */
  async function walk(
    a: Actor | string,
    path: string,
    want: number,
    /** A list that grows while it is read (webhook deliveries of runs still ending). */
    growing = false,
  ): Promise<{ status: number; items: Json[] }> {
    const size = 1 + int(chance(0.3) ? 60 : 6);
    const sep = path.includes("?") ? "&" : "?";
    let url: string | null = `${path}${sep}page_size=${size}`;
    const items: Json[] = [];
    let count = -1;
    let page = 0;
    while (url) {
      const r = await http(a, "GET", url);
      if (page === 0 && r.status !== 200) {
        expectStatus(r, want);
        return { status: r.status, items };
      }
      expectStatus(r, 200);
      page++;
      if (count === -1) count = r.json.count;
      check(growing || r.json.count === count, `${path}: count changed between pages`);
      check(r.json.results.length <= size, `${path}: page longer than page_size`);
      if (page === 1) check(r.json.previous === null, `${path}: first page has a previous link`);
      else
        check(
          r.json.previous && new URL(r.json.previous).searchParams.get("page") === String(page - 1),
          `${path}: bad previous link ${r.json.previous}`,
        );
      if (r.json.next && !growing)
        check(r.json.results.length === size, `${path}: a page before the last is short`);
      items.push(...r.json.results);
      url = r.json.next;
      if (page > 500) fail(`${path}: endless paging`);
    }
    check(want === 200, `${path}: expected ${want}, got 200`);
    check(
      growing || items.length === count,
      `${path}: ${items.length} items over the pages, count says ${count}`,
    );
    if (chance(0.2)) {
      const past = Math.max(1, Math.ceil(count / size)) + 1 + int(3);
      const r = await http(a, "GET", `${path}${sep}page_size=${size}&page=${past}`);
      expectStatus(r, 200);
      check(
        r.json.results.length === 0 && r.json.next === null && r.json.previous,
        `${path}: a page past the end is not an empty page with previous`,
      );
      // The count and the page are one statement on PostgreSQL (an empty page LEFT JOINed to it).
      check(
        growing || r.json.count === count,
        `${path}: a page past the end counts ${r.json.count}, not ${count}`,
      );
    }
    return { status: 200, items };
  }
  const sameList = (what: string, got: unknown[], want: unknown[]) =>
    check(
      JSON.stringify(got) === JSON.stringify(want),
      `${what}: list differs from the model\n got ${JSON.stringify(got)}\nwant ${JSON.stringify(want)}`,
    );
  const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

  // ----- operations -----
  /** A reader of `org` who always may: the monitor is no member, so borrow an admin's live token. */
  function monitorOf(org: string): Actor {
    const o = m.org(org)!;
    const u = [...o.members.keys()].find((x) => liveTokens(m.users.get(x)!).length)!;
    const user = m.users.get(u)!;
    return { user, token: liveTokens(user)[0]! };
  }

  return {
    s,
    receiver,
    opts,
    rnd,
    int,
    pick,
    chance,
    m,
    trace,
    st,
    statuses,
    full,
    fail,
    check,
    http,
    expectStatus,
    precondition,
    audit,
    monitor,
    root,
    liveTokens,
    ghosts,
    actor,
    who,
    orgFor,
    workflowIdent,
    allRuns,
    wfPath,
    walk,
    sameList,
    byCode,
    monitorOf,
    checkAudit,
  };
}
export type Ctx = Awaited<ReturnType<typeof createContext>>;
export type Ops = Record<string, [number, () => Promise<void>]>;
