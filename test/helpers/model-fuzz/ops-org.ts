// Orgs, members and roles, tokens, users, webhooks, the org audit log.
import { type Ctx, type Json, type Ops, SLUGS, OTHER_USERS } from "./context.ts";
import { type MUser, ROLES } from "./model.ts";

// A password whose Unicode forms differ: è composed or not, the ligature ﬁ (NFKC: "fi"), the ohm
// sign (NFC and NFKC: Ω U+03A9). Passwords are hashed and judged in their NFKC form
// (docs/security.md): any form of it signs in.
const PASSWORD = "Crème ﬁne Ω password";
const FORMS = [
  (p: string) => p,
  (p: string) => p.normalize("NFC"),
  (p: string) => p.normalize("NFD"),
  (p: string) => p.normalize("NFKC"),
  (p: string) => p.normalize("NFKD"),
];

export function orgOps(c: Ctx): Ops {
  const {
    int,
    pick,
    chance,
    m,
    st,
    check,
    http,
    expectStatus,
    precondition,
    audit,
    root,
    liveTokens,
    ghosts,
    actor,
    who,
    allRuns,
    walk,
    sameList,
    byCode,
    s,
    receiver,
  } = c;
  return {
    listMembers: [
      4,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const want = m.access(a.user, a.token, org, "viewer") || 200;
        const { status, items } = await walk(a, `/api/v1/orgs/${org}/members/`, want);
        if (status !== 200 || !o) return;
        const model = [...o.members.entries()].sort((x, y) => byCode(x[0], y[0]));
        sameList(
          `members of ${org}`,
          items.map((x) => [x.username, x.role]),
          model,
        );
      },
    ],
    listTokens: [
      3,
      async () => {
        const a = actor();
        const want = a.token.revoked ? 401 : 200;
        const { status, items } = await walk(a, "/api/v1/users/me/tokens/", want);
        if (status !== 200) return;
        const model = [...a.user.tokens].sort((x, y) => y.id - x.id);
        sameList(
          `tokens of ${a.user.name}`,
          items.map((t) => [t.id, t.revoked_at !== null]),
          model.map((t) => [t.id, t.revoked]),
        );
      },
    ],
    listOrgs: [
      2,
      async () => {
        const a = actor();
        const want = a.token.revoked ? 401 : 200;
        const { status, items } = await walk(a, "/api/v1/orgs/", want);
        if (status !== 200) return;
        const model = [...m.orgs.values()]
          .filter((o) => o.members.has(a.user.name))
          .sort((x, y) => byCode(x.slug, y.slug));
        sameList(
          `orgs of ${a.user.name}`,
          items.map((o) => [o.org_slug, o.role, o.status]),
          model.map((o) => [o.slug, o.members.get(a.user.name), o.suspended ? "suspended" : "active"]),
        );
      },
    ],
    listWebhooks: [
      3,
      async () => {
        const { a, org } = who("admin");
        const o = m.org(org);
        const want = m.access(a.user, a.token, org, "admin") || 200;
        const { status, items } = await walk(a, `/api/v1/orgs/${org}/webhooks/`, want);
        if (status !== 200 || !o) return;
        const model = [...o.webhooks.values()].sort((x, y) => x.id - y.id);
        sameList(
          `webhooks of ${org}`,
          items.map((w) => [w.id, w.url, w.workflow_slugs, w.is_active]),
          model.map((w) => [w.id, w.url, w.workflow_slugs, w.is_active]),
        );
      },
    ],
    listOrgAudit: [
      1,
      async () => {
        const { a, org } = who("admin");
        const want = m.access(a.user, a.token, org, "admin") || 200;
        const { status, items } = await walk(a, `/api/v1/orgs/${org}/audit/`, want);
        if (status !== 200) return;
        const seqs = items.map((e) => e.seq);
        check(
          seqs.every((q, i) => i === 0 || q < seqs[i - 1]),
          `audit of ${org}: not newest first, or repeated`,
        );
        check(
          items.every((e) => e.org_slug === org),
          `audit of ${org}: another org's entry`,
        );
      },
    ],
    createWebhook: [
      2,
      async () => {
        const { a, org } = who("admin");
        const o = m.org(org);
        const slugs = o ? [...o.workflows.values()].map((w) => w.slug) : [];
        const filter = chance(0.5)
          ? []
          : [
              ...new Set(
                Array.from({ length: 1 + int(2) }, () =>
                  chance(0.85) && slugs.length ? pick(slugs) : pick(SLUGS),
                ),
              ),
            ];
        const body = {
          url: `${receiver.url}/h${int(1000)}`,
          workflow_slugs: filter,
          is_active: chance(0.85),
        };
        // A precondition only on a valid body: which of a 400 and a 412 comes first is not asked.
        const pc = filter.some((x) => !slugs.includes(x)) ? { fails: false } : precondition();
        const r = await http(a, "POST", `/api/v1/orgs/${org}/webhooks/`, { body, headers: pc.headers });
        const access = m.access(a.user, a.token, org, "admin");
        if (access) return expectStatus(r, access);
        // The limit (docs/webhooks.md) is checked before the filter's slugs.
        if (o!.webhooks.size >= 20) return expectStatus(r, 409, "conflict");
        if (filter.some((x) => !slugs.includes(x))) return expectStatus(r, 400, "invalid_request");
        if (pc.fails) return expectStatus(r, 412);
        expectStatus(r, 201);
        o!.webhooks.set(r.json.id, {
          id: r.json.id,
          url: body.url,
          workflow_slugs: filter,
          is_active: body.is_active,
        });
        audit("webhook.create", org, a);
      },
    ],
    editWebhook: [
      3,
      async () => {
        const { a, org } = who("admin");
        const o = m.org(org);
        const all = [...m.orgs.values()].flatMap((x) => [...x.webhooks.values()]);
        const h = all.length
          ? o?.webhooks.size && chance(0.85)
            ? pick([...o.webhooks.values()])
            : pick(all)
          : undefined;
        const id = h?.id ?? 99999;
        const mine = o?.webhooks.get(id);
        const kind = pick(["patch", "patch", "delete", "ping", "get", "redeliver"]);
        const base = `/api/v1/orgs/${org}/webhooks/${id}/`;
        const access = m.access(a.user, a.token, org, "admin");
        if (kind === "get") {
          const r = await http(a, "GET", base);
          if (access) return expectStatus(r, access);
          if (!mine) return expectStatus(r, 404);
          expectStatus(r, 200);
          sameList(
            "webhook",
            [r.json.url, r.json.workflow_slugs, r.json.is_active],
            [mine.url, mine.workflow_slugs, mine.is_active],
          );
          return;
        }
        if (kind === "delete") {
          const pc = precondition();
          const r = await http(a, "DELETE", base, { headers: pc.headers });
          if (access) return expectStatus(r, access);
          if (!mine) return expectStatus(r, 404);
          if (pc.fails) return expectStatus(r, 412);
          expectStatus(r, 204);
          o!.webhooks.delete(id);
          audit("webhook.delete", org, a);
          return;
        }
        if (kind === "ping") {
          const r = await http(a, "POST", `${base}ping/`);
          if (access) return expectStatus(r, access);
          if (!mine) return expectStatus(r, 404);
          if (!mine.is_active) return expectStatus(r, 409, "conflict");
          expectStatus(r, [202, 429]);
          if (r.status === 202) audit("webhook.ping", org, a);
          return;
        }
        if (kind === "redeliver") {
          let did = "msg_nosuch";
          let pending = false;
          if (mine && !access) {
            const { items } = await walk(a, `${base}deliveries/`, 200, true);
            check(
              items.every((d) => d.webhook_id === id),
              "a delivery of another webhook",
            );
            check(
              new Set(items.map((d) => d.id)).size === items.length || allRuns().some((x) => !x.final),
              "a delivery listed twice",
            );
            if (items.length && chance(0.9)) {
              const d = pick(items);
              did = d.id;
              pending = d.status === "pending";
            }
          }
          const r = await http(a, "POST", `${base}deliveries/${did}/redeliver/`);
          if (access) return expectStatus(r, access);
          if (!mine || did === "msg_nosuch") return expectStatus(r, 404);
          if (!mine.is_active) return expectStatus(r, 409, "conflict");
          expectStatus(r, pending ? [202, 409, 429] : [202, 429]);
          if (r.status === 202) audit("webhook.redeliver", org, a);
          return;
        }
        const slugs = o ? [...o.workflows.values()].map((w) => w.slug) : [];
        const body: Record<string, unknown> = {};
        if (chance(0.4)) body.is_active = chance(0.6);
        if (chance(0.3)) body.url = `${receiver.url}/p${int(100)}`;
        if (chance(0.4))
          body.workflow_slugs = chance(0.3)
            ? []
            : [
                ...new Set([
                  ...(chance(0.5) ? (mine?.workflow_slugs ?? []) : []),
                  ...(chance(0.7) && slugs.length ? [pick(slugs)] : [pick(SLUGS)]),
                ]),
              ];
        const unknown = ((body.workflow_slugs as string[] | undefined) ?? []).some((x) => !slugs.includes(x));
        const pc = unknown ? { fails: false } : precondition();
        const r = await http(a, "PATCH", base, { body, headers: pc.headers });
        if (access) return expectStatus(r, access);
        if (!mine) return expectStatus(r, 404);
        const fresh = ((body.workflow_slugs as string[] | undefined) ?? []).filter(
          (x) => !mine.workflow_slugs.includes(x),
        );
        if (fresh.some((x) => !slugs.includes(x))) return expectStatus(r, 400, "invalid_request");
        if (pc.fails) return expectStatus(r, 412);
        expectStatus(r, 200);
        const before = JSON.stringify(mine);
        Object.assign(mine, body);
        if (JSON.stringify(mine) !== before) audit("webhook.update", org, a);
        sameList(
          "patched webhook",
          [r.json.url, r.json.workflow_slugs, r.json.is_active],
          [mine.url, mine.workflow_slugs, mine.is_active],
        );
      },
    ],
    members: [
      4,
      async () => {
        const { a, org } = who("admin");
        const o = m.org(org);
        const target = pick([...m.users.keys()]);
        const role = pick(ROLES);
        const kind = pick(["add", "update", "remove", "get"]);
        const access = m.access(a.user, a.token, org, kind === "get" ? "viewer" : "admin");
        const current = o?.members.get(target);
        const admins = o ? [...o.members.values()].filter((x) => x === "admin").length : 0;
        if (kind === "get") {
          const r = await http(a, "GET", `/api/v1/orgs/${org}/members/${target}/`);
          if (access) return expectStatus(r, access);
          if (!current) return expectStatus(r, 404);
          expectStatus(r, 200);
          return sameList("member", [r.json.username, r.json.role], [target, current]);
        }
        if (kind === "add") {
          const pc = precondition();
          const r = await http(a, "POST", `/api/v1/orgs/${org}/members/`, {
            body: { username: target, role },
            headers: pc.headers,
          });
          if (access) return expectStatus(r, access);
          // A username taken is a conflict of the content: after the 412 (docs/api.md).
          if (pc.fails) return expectStatus(r, 412);
          if (current) return expectStatus(r, 409, "conflict");
          expectStatus(r, 201);
          o!.members.set(target, role);
          return audit("member.add", org, a);
        }
        if (kind === "update") {
          const pc = precondition();
          const r = await http(a, "PATCH", `/api/v1/orgs/${org}/members/${target}/`, {
            body: { role },
            headers: pc.headers,
          });
          if (access) return expectStatus(r, access);
          if (!current) return expectStatus(r, 404);
          if (current === "admin" && role !== "admin" && admins === 1)
            return expectStatus(r, 409, "conflict");
          if (pc.fails) return expectStatus(r, 412);
          expectStatus(r, 200);
          if (current !== role) audit("member.update", org, a);
          o!.members.set(target, role);
          return;
        }
        const pc = precondition();
        const r = await http(a, "DELETE", `/api/v1/orgs/${org}/members/${target}/`, { headers: pc.headers });
        if (access) return expectStatus(r, access);
        if (!current) return expectStatus(r, 404);
        if (current === "admin" && admins === 1) return expectStatus(r, 409, "conflict");
        if (pc.fails) return expectStatus(r, 412);
        expectStatus(r, 204);
        o!.members.delete(target);
        audit("member.remove", org, a);
      },
    ],
    tokens: [
      3,
      async () => {
        const a = actor();
        const kind = pick(["create", "revoke", "revoke", "get"]);
        const all = [...m.users.values()].flatMap((u) => u.tokens.map((t) => [u, t] as const));
        if (kind === "create") {
          const r = await http(a, "POST", "/api/v1/users/me/tokens/", { body: { name: `t${int(100)}` } });
          if (a.token.revoked) return expectStatus(r, 401);
          if (liveTokens(a.user).length >= 100) return expectStatus(r, 409, "conflict");
          expectStatus(r, 201);
          a.user.tokens.push({ id: r.json.id, secret: r.json.token, revoked: false, name: r.json.name });
          return audit("token.create", null, a);
        }
        const [owner, t] = chance(0.8) ? [a.user, pick(a.user.tokens)] : pick(all);
        if (kind === "get") {
          const r = await http(a, "GET", `/api/v1/users/me/tokens/${t.id}/`);
          if (a.token.revoked) return expectStatus(r, 401);
          if (owner !== a.user) return expectStatus(r, 404);
          expectStatus(r, 200);
          return sameList("token", [r.json.id, r.json.revoked_at !== null], [t.id, t.revoked]);
        }
        // Keep one live token per user (the model picks among them), and root's first (setup's).
        const last = owner === a.user && !t.revoked && liveTokens(a.user).length === 1;
        if (last || t.id === root.tokens[0]!.id) return;
        const pc = precondition();
        const r = await http(a, "DELETE", `/api/v1/users/me/tokens/${t.id}/`, { headers: pc.headers });
        if (a.token.revoked) return expectStatus(r, 401);
        if (owner !== a.user) return expectStatus(r, 404);
        if (pc.fails) return expectStatus(r, 412);
        expectStatus(r, 204);
        if (!t.revoked) audit("token.revoke", null, a);
        t.revoked = true;
      },
    ],
    orgAdmin: [
      2,
      async () => {
        const a = chance(0.5) ? actor(root) : actor();
        const org = pick([...m.orgs.keys()]);
        const o = m.org(org)!;
        const kind = pick(["suspend", "restore", "restore", "restore", "rename", "rename"]);
        if (kind === "rename") {
          const name = pick(["Acme Inc", "Beta Ltd", o.name]);
          const pc = precondition();
          const r = await http(a, "PATCH", `/api/v1/orgs/${org}/`, { body: { name }, headers: pc.headers });
          const access = m.access(a.user, a.token, org, "admin");
          if (access) return expectStatus(r, access);
          if (pc.fails) return expectStatus(r, 412);
          expectStatus(r, 200);
          if (name !== o.name) audit("org.update", org, a);
          o.name = name;
          return check(r.json.name === name, "renamed org's name");
        }
        const r = await http(a, "POST", `/api/v1/admin/orgs/${org}/${kind}/`);
        if (a.token.revoked) return expectStatus(r, 401);
        if (!a.user.isAdmin) return expectStatus(r, 403);
        expectStatus(r, 200);
        // Suspending a suspended org (or restoring an active one) is a 200 that changes nothing.
        if (kind === "suspend" && !o.suspended) audit("org.suspend", org, a);
        if (kind === "restore" && o.suspended) audit("org.restore", org, a);
        o.suspended = kind === "suspend";
      },
    ],
    users: [
      1,
      async () => {
        // An instance admin deletes a user (tokens stop, memberships end, runs stay) or creates
        // one again with a token (the token made by the server itself, logged by the system).
        const a = chance(0.8) ? actor(root) : actor();
        const name = pick(OTHER_USERS);
        const u = m.users.get(name);
        if (u?.password && chance(0.4)) {
          // The user signs in with the password in another Unicode form (no token: a session).
          const r = await http(null, "POST", "/api/v1/auth/login/", {
            body: { username: name, password: pick(FORMS)(u.password) },
          });
          // 10 attempts a minute a username (docs/security.md): a 429 signs no one in.
          expectStatus(r, [200, 429], r.status === 429 ? "rate_limited" : undefined);
          if (r.status === 200) audit("auth.login", null, { user: u, token: u.tokens[0]! });
          return;
        }
        if (u) {
          const r = await http(a, "DELETE", `/api/v1/admin/users/${name}/`);
          if (a.token.revoked) return expectStatus(r, 401);
          if (!a.user.isAdmin) return expectStatus(r, 403);
          expectStatus(r, 204);
          st.auditUnordered = true;
          audit("user.delete", null, a);
          for (const o of m.orgs.values()) if (o.members.delete(name)) audit("member.remove", o.slug, a);
          m.users.delete(name);
          m.keys = m.keys.filter((k) => k.user !== name);
          // Its runs stay, by a user no one is any more (a new user of that name is another).
          for (const run of allRuns()) if (run.createdBy === name) run.createdBy = `${name}(deleted)`;
          // Its tokens: still usable by the model's actors as revoked ones (401), through a ghost.
          const ghost: MUser = {
            name: `${name}(deleted)`,
            isAdmin: false,
            tokens: u.tokens.map((t) => ({ ...t, revoked: true })),
          };
          ghosts.push(ghost);
          return;
        }
        const password = pick(FORMS)(PASSWORD);
        const r = await http(a, "POST", "/api/v1/admin/users/", {
          body: { username: name, password },
        });
        if (a.token.revoked) return expectStatus(r, 401);
        if (!a.user.isAdmin) return expectStatus(r, 403);
        expectStatus(r, 201);
        audit("user.create", null, a);
        const t = await s.user(name);
        m.users.set(name, {
          name,
          isAdmin: false,
          tokens: [{ id: t.tokenId, secret: t.token, revoked: false, name: `${name}-token` }],
          password,
        });
        audit("token.create", null, null);
      },
    ],
    me: [
      1,
      async () => {
        const a = actor();
        const r = await http(a, "GET", pick(["/api/v1/users/me/", "/api/v1/auth/me/"]));
        if (a.token.revoked) return expectStatus(r, 401);
        expectStatus(r, 200);
        const orgs = [...m.orgs.values()]
          .filter((o) => o.members.has(a.user.name))
          .map((o) => [o.slug, o.members.get(a.user.name)]);
        sameList(
          "me",
          [
            r.json.username,
            r.json.is_admin,
            r.json.token?.id,
            r.json.orgs.map((o: Json) => [o.org_slug, o.role]).sort(),
          ],
          [a.user.name, a.user.isAdmin, a.token.id, orgs.sort()],
        );
      },
    ],
  };
}
