// Requests sent together: one winner, or all landing, whichever arrives first.
import { type Ctx, type Ops, SLUGS, SYNTAX, type Res, type Actor } from "./context.ts";
import { type MUser, ROLES, type Role, createdWorkflow, definition, rank } from "./model.ts";

export function burstOps(c: Ctx): Ops {
  const { int, pick, chance, m, st, check, http, expectStatus, audit, root, liveTokens, wfPath, sameList } =
    c;
  return {
    burst: [
      3,
      async () => {
        // Requests sent together: the outcome is the same whichever lands first (one winner, the
        // rest refused, or all landing), and the audit log holds one entry per change.
        st.auditUnordered = true;
        const n = 2 + int(3);
        const orgs = [...m.orgs.values()].filter((o) => !o.suspended);
        if (!orgs.length) return;
        const o = pick(orgs);
        const org = o.slug;
        const holders = (min: Role) =>
          [...o.members.entries()].filter(([, r]) => rank(r) >= rank(min)).map(([u]) => m.users.get(u)!);
        const authors = holders("author");
        const admins = holders("admin");
        const live = (u: MUser): Actor => ({ user: u, token: pick(liveTokens(u)) });
        const kind = pick(["create", "patches", "ifmatch", "delete", "steps", "member", "revoke", "idem"]);
        const wfs = [...o.workflows.values()];
        const all = <T>(f: (i: number) => Promise<T>) =>
          Promise.all(Array.from({ length: n }, (_, i) => f(i)));
        const statusesOf = (rs: Res[]) =>
          rs
            .map((r) => r.status)
            .sort()
            .join(",");
        const expectOne = (rs: Res[], ok: number, other: number) => {
          const want = [ok, ...Array(n - 1).fill(other)].sort().join(",");
          check(statusesOf(rs) === want, `burst ${kind}: statuses ${statusesOf(rs)}, expected ${want}`);
          for (const r of rs)
            if (r.status !== ok) expectStatus(r, other, other === 409 ? "conflict" : undefined);
          return rs.find((r) => r.status === ok)!;
        };
        if (kind === "create" && authors.length) {
          const slug = SLUGS.find((x) => !m.workflowBy(o, x));
          if (!slug) return;
          const rs = await all(() =>
            http(live(pick(authors)), "POST", `/api/v1/orgs/${org}/workflows/`, {
              body: { slug, name: "Burst", allowed_file_types: ["JSON"], steps: [SYNTAX] },
            }),
          );
          const won = expectOne(rs, 201, 409);
          const w = createdWorkflow(won.json, { slug, name: "Burst", description: "", status: "active" });
          o.workflows.set(w.id, w);
          return audit("workflow.create", org, null, true);
        }
        if (
          (kind === "patches" || kind === "ifmatch" || kind === "delete" || kind === "steps") &&
          authors.length &&
          wfs.length
        ) {
          const w = pick(wfs);
          const path = wfPath(org, chance(0.5) ? w.slug : String(w.id));
          if (kind === "patches") {
            // Different fields at once: each lands (docs/api.md, "Edits of one workflow that arrive together").
            const edits = [{ name: `${w.name}+` }, { description: `${w.description}+` }].slice(
              0,
              Math.min(n, 2),
            );
            const rs = await Promise.all(
              edits.map((e) => http(live(pick(authors)), "PATCH", path, { body: e })),
            );
            for (const r of rs) expectStatus(r, 200);
            w.name = `${w.name}+`;
            w.description = `${w.description}+`;
            for (const _ of edits) {
              w.version++;
              audit("workflow.update", org, null, true);
            }
            w.history.push(...edits.map(() => definition(w, { ids: true })));
            // The intermediate versions are not known here: forget their definitions.
            for (let i = w.history.length - edits.length; i < w.history.length - 1; i++) w.history[i] = "";
            return;
          }
          if (kind === "ifmatch") {
            const rs = await all((i) =>
              http(live(pick(authors)), "PATCH", path, {
                body: { name: `${w.name}#${i}` },
                headers: { "if-match": `"${w.version}"` },
              }),
            );
            const won = expectOne(rs, 200, 412);
            w.name = won.json.name;
            w.version++;
            w.history.push(definition(w, { ids: true }));
            return audit("workflow.update", org, null, true);
          }
          if (kind === "delete") {
            const rs = await all(() => http(live(pick(authors)), "DELETE", path));
            expectOne(rs, 204, 404);
            o.workflows.delete(w.id);
            o.deletedWorkflows.set(w.id, w.slug);
            return audit("workflow.delete", org, null, true);
          }
          const rs = await all((i) =>
            http(live(pick(authors)), "POST", `${path}steps/`, { body: { ...SYNTAX, name: `b${i}` } }),
          );
          for (const r of rs) expectStatus(r, 201);
          const orders = rs.map((r) => r.json.order).sort((x, y) => x - y);
          sameList(
            "orders of steps added together",
            orders,
            Array.from({ length: n }, (_, i) => w.steps.length + 1 + i),
          );
          for (const r of [...rs].sort((x, y) => x.json.order - y.json.order)) {
            w.steps.push({
              id: r.json.id,
              name: r.json.name,
              validator: "syntax",
              config: {},
              is_active: true,
            });
            w.version++;
            w.history.push("");
            audit("step.create", org, null, true);
          }
          w.history[w.history.length - 1] = definition(w, { ids: true });
          return;
        }
        if (kind === "member" && admins.length) {
          const outsider = [...m.users.keys()].find((u) => !o.members.has(u));
          if (!outsider) return;
          const role = pick(ROLES);
          const rs = await all(() =>
            http(live(pick(admins)), "POST", `/api/v1/orgs/${org}/members/`, {
              body: { username: outsider, role },
            }),
          );
          expectOne(rs, 201, 409);
          o.members.set(outsider, role);
          return audit("member.add", org, null, true);
        }
        if (kind === "revoke") {
          const u = pick([...m.users.values()].filter((x) => liveTokens(x).length > 2 && x !== root));
          if (!u) return;
          const victim = liveTokens(u)[0]!;
          const rs = await all(() =>
            http(
              { user: u, token: liveTokens(u).filter((t) => t !== victim)[0]! },
              "DELETE",
              `/api/v1/users/me/tokens/${victim.id}/`,
            ),
          );
          for (const r of rs) expectStatus(r, 204);
          victim.revoked = true;
          return audit("token.revoke", null, null, true);
        }
        if (kind === "idem") {
          const execs = holders("executor");
          const w = wfs.find((x) => x.status === "active" && x.steps.some((y) => y.is_active));
          if (!execs.length || !w) return;
          const u = pick(execs);
          const key = `burst${int(1e9)}`;
          const body = { content: '{"a":1}', content_type: "application/json" };
          const rs = await all(() =>
            http(live(u), "POST", `${wfPath(org, w.slug)}runs/`, {
              body,
              headers: { "idempotency-key": key, prefer: "wait=60" },
            }),
          );
          const ok = rs.filter((r) => r.status === 201);
          check(ok.length >= 1, `burst idem: no 201 among ${statusesOf(rs)}`);
          for (const r of rs) if (r.status !== 201) expectStatus(r, 409, "idempotency_key_in_progress");
          check(new Set(ok.map((r) => r.json.id)).size === 1, "burst idem: two runs for one key");
          const first = ok[0]!;
          o.runs.set(first.json.id, {
            id: first.json.id,
            org,
            workflowId: w.id,
            createdBy: u.name,
            createdAt: first.json.created_at,
            final: first.json.status,
          });
          m.keys.push({
            user: u.name,
            key,
            org,
            ident: w.slug,
            body: body.content,
            status: 201,
            runId: first.json.id,
            workflowId: w.id,
            slug: w.slug,
          });
        }
      },
    ],
  };
}
