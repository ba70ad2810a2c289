// Runs: sync and async starts, idempotency keys new and reused, reads, cancels (of held runs too).
import { HOLD_WORKFLOW } from "../gates.ts";
import type { Ctx, Json, Ops } from "./context.ts";
import { type MRun, createdWorkflow, rank } from "./model.ts";

export function runOps(c: Ctx): Ops {
  const {
    int,
    pick,
    chance,
    m,
    trace,
    st,
    check,
    http,
    expectStatus,
    precondition,
    audit,
    actor,
    who,
    workflowIdent,
    allRuns,
    wfPath,
    walk,
    sameList,
    byCode,
    monitorOf,
    liveTokens,
    s,
    opts,
  } = c;
  return {
    listRuns: [
      4,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const want = m.access(a.user, a.token, org, "viewer") || 200;
        const filter = chance(0.3) ? workflowIdent(o) : null;
        const { status, items } = await walk(
          a,
          `/api/v1/orgs/${org}/runs/${filter ? `?workflow=${filter}` : ""}`,
          want,
        );
        if (status !== 200 || !o) return;
        const fw =
          filter === null
            ? null
            : (m.workflowBy(o, filter)?.id ?? (/^\d+$/.test(filter) ? Number(filter) : -1));
        const model = [...o.runs.values()]
          .filter((r) => fw === null || r.workflowId === fw)
          .sort((x, y) => byCode(y.createdAt, x.createdAt) || byCode(y.id, x.id));
        sameList(
          `runs of ${org}`,
          items.map((r) => [r.id, r.org_slug]),
          model.map((r) => [r.id, org]),
        );
        for (const r of items)
          if (["succeeded", "failed", "error", "canceled", "timed_out"].includes(r.status))
            o.runs.get(r.id)!.final = r.status;
      },
    ],
    startRun: [
      8,
      async () => {
        const { a, org } = who("executor");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const async = chance(0.4);
        const content = pick(['{"a":1}', "[1,2]", '{"b":[true]}']);
        const reuse = m.keys.filter((k) => k.user === a.user.name);
        let key: string | null = null;
        let same = false;
        let prior: (typeof m.keys)[number] | undefined;
        if (reuse.length && chance(0.3)) {
          prior = pick(reuse);
          key = prior.key;
          same = chance(0.6);
        } else if (chance(0.4)) key = `k${int(1e9)}`;
        const useOrg = same ? prior!.org : org;
        const useIdent = same ? prior!.ident : ident;
        const body = { content: same ? prior!.body : content, content_type: "application/json" };
        const headers: Record<string, string> = { prefer: async ? "respond-async" : "wait=60" };
        if (key) headers["idempotency-key"] = key;
        const r = await http(a, "POST", `${wfPath(useOrg, useIdent)}runs/`, { body, headers });
        const uo = m.org(useOrg);
        const uw = uo && m.workflowBy(uo, useIdent);
        // A "different" request drawn equal to the first one is the same request.
        if (
          prior &&
          !same &&
          useOrg === prior.org &&
          body.content === prior.body &&
          (useIdent === prior.ident || useIdent === prior.slug || uw?.id === prior.workflowId)
        )
          same = true;
        if (same && prior) {
          // A retry of an answered request: its first answer, whatever happened since, as long as
          // the caller may still read the org (docs/decisions.md, "An idempotent retry after a change").
          const access = m.access(a.user, a.token, useOrg, "viewer");
          if (access) return expectStatus(r, access);
          expectStatus(r, prior.status);
          check(
            r.headers.get("idempotent-replayed") === "true" && r.json.id === prior.runId,
            "replay of an idempotent request",
          );
          return;
        }
        const access = m.access(a.user, a.token, useOrg, "executor");
        if (access)
          return expectStatus(
            r,
            prior && access === 403 && m.access(a.user, a.token, useOrg, "viewer") === 0
              ? [403, 422]
              : access,
          );
        if (!uw) return expectStatus(r, prior ? [404, 422] : 404);
        if (uw.status === "inactive")
          return expectStatus(r, prior ? [409, 422] : 409, prior ? undefined : "workflow_inactive");
        if (!uw.steps.some((x) => x.is_active))
          return expectStatus(r, prior ? [400, 422] : 400, prior ? undefined : "no_workflow_steps");
        if (prior) return expectStatus(r, 422, "idempotency_key_reused");
        expectStatus(r, async ? 202 : 201);
        const run: MRun = {
          id: r.json.id,
          org: useOrg,
          workflowId: uw.id,
          createdBy: a.user.name,
          createdAt: r.json.created_at,
          final: async ? null : r.json.status,
        };
        check(run.createdAt, "run without created_at");
        check(!allRuns().some((x) => x.id === run.id), "run id reused");
        uo!.runs.set(run.id, run);
        check(
          r.json.workflow.id === uw.id &&
            r.json.workflow.version === uw.version &&
            r.json.created_by.username === a.user.name,
          "run's workflow or creator",
        );
        if (!async) check(["succeeded", "failed"].includes(r.json.status), `sync run ended ${r.json.status}`);
        // MODEL_FUZZ_SLOW=1: say which sync runs took over 3 s from start to end (a stall to explain).
        if (!async && process.env.MODEL_FUZZ_SLOW) {
          const g = await http(a, "GET", `/api/v1/orgs/${useOrg}/runs/${run.id}/`);
          const took = Date.parse(g.json.finished_at) - Date.parse(g.json.created_at);
          if (took > 3000)
            opts.log?.(
              `SLOW RUN ${took} ms: ${JSON.stringify({ c: g.json.created_at, s: g.json.started_at, f: g.json.finished_at, status: g.json.status, steps: g.json.steps.map((x: Json) => [x.name, x.validator, x.status, x.duration_ms]), held: st.heldRun?.id ?? null, heldGate: !!st.heldRun?.gate })}\n${trace.slice(-80).join("\n")}`,
            );
        }
        if (key)
          m.keys.push({
            user: a.user.name,
            key,
            org: useOrg,
            ident: useIdent,
            body: body.content,
            status: r.status,
            runId: run.id,
            workflowId: uw.id,
            slug: uw.slug,
          });
      },
    ],
    getRun: [
      4,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const runs = allRuns();
        const run = runs.length ? pick(runs) : null;
        const id = run?.id ?? "01890000-0000-7000-8000-000000000000";
        const r = await http(a, "GET", `/api/v1/orgs/${org}/runs/${id}/`);
        const access = m.access(a.user, a.token, org, "viewer");
        if (access) return expectStatus(r, access);
        if (!run || run.org !== org) return expectStatus(r, 404);
        expectStatus(r, 200);
        check(
          r.json.id === run.id &&
            r.json.org_slug === org &&
            r.json.workflow.id === run.workflowId &&
            r.json.created_by.username === run.createdBy.replace("(deleted)", ""),
          "run differs from the model",
        );
        if (run.final)
          check(r.json.status === run.final, `final run changed status ${run.final} -> ${r.json.status}`);
        else if (!["queued", "running"].includes(r.json.status)) run.final = r.json.status;
        void o;
      },
    ],
    cancelRun: [
      2,
      async () => {
        const { a, org } = who("viewer");
        const runs = allRuns();
        const run = runs.length ? pick(runs) : null;
        const id = run?.id ?? "01890000-0000-7000-8000-000000000000";
        const pc = precondition();
        const r = await http(a, "POST", `/api/v1/orgs/${org}/runs/${id}/cancel/`, { headers: pc.headers });
        const access = m.access(a.user, a.token, org, "viewer");
        if (access) return expectStatus(r, access);
        if (!run || run.org !== org) return expectStatus(r, 404);
        const role = m.org(org)!.members.get(a.user.name);
        if (rank(role) < rank("author") && run.createdBy !== a.user.name) return expectStatus(r, 403);
        if (run.final) return expectStatus(r, 409, "conflict");
        /** A 409: the run has ended (since the model last looked). */
        const ended = async () => {
          const g = await http(monitorOf(org), "GET", `/api/v1/orgs/${org}/runs/${id}/`);
          check(
            !["queued", "running"].includes(g.json.status),
            "a cancel refused as final for a run still going",
          );
          run.final = g.json.status;
        };
        if (pc.fails) {
          // The 409 of a run that has ended wins over a false precondition (docs/api.md).
          expectStatus(r, [412, 409]);
          if (r.status === 409) await ended();
          return;
        }
        expectStatus(r, run.gate && r.json?.detail !== "The run is already timed_out." ? 200 : [200, 409]);
        if (r.status === 200) {
          check(r.json.status === "canceled", `cancel answered a run ${r.json.status}`);
          run.final = "canceled";
          audit("run.cancel", org, a);
        } else await ended();
      },
    ],
    holdRun: [
      2,
      async () => {
        // A run held in its step by a gate (test_hold), released within this step: canceled (which
        // must take: 200, canceled, logged) or let go to pass or fail. Never held across steps: a
        // small job handed to its worker behind a held one waits for it (the pool pipelines), and
        // a sync start would then wait out the step's time limit.
        const { a, org } = who("executor");
        const o = m.org(org);
        if (!o || m.access(a.user, a.token, org, "executor")) return;
        let w = [...o.workflows.values()].find(
          (x) =>
            x.status === "active" &&
            x.steps.length &&
            x.steps.every((y) => y.validator === "test_hold" && y.is_active),
        );
        if (!w) {
          const author = [...o.members.entries()].find(([, r]) => rank(r) >= rank("author"));
          if (!author || m.workflowBy(o, "hold")) return;
          const au = actor(m.users.get(author[0])!);
          const r = await http(au, "POST", `/api/v1/orgs/${org}/workflows/`, {
            body: { ...HOLD_WORKFLOW, name: "Hold" },
          });
          if (au.token.revoked) return expectStatus(r, 401);
          expectStatus(r, 201);
          w = createdWorkflow(r.json, { slug: "hold", name: "Hold", description: "", status: "active" });
          o.workflows.set(w.id, w);
          audit("workflow.create", org, au);
        }
        const gate = s.gates.gate("fz");
        const r = await http(a, "POST", `${wfPath(org, String(w.id))}runs/`, {
          body: { content: gate.doc(), content_type: "application/json" },
          headers: { prefer: "respond-async" },
        });
        expectStatus(r, 202);
        const run: MRun = {
          id: r.json.id,
          org,
          workflowId: w.id,
          createdBy: a.user.name,
          createdAt: r.json.created_at,
          final: null,
          gate,
        };
        o.runs.set(run.id, run);
        st.heldRun = run;
        try {
          await gate.held();
          const able = [...o.members.entries()]
            .filter(([u, role]) => !o.suspended && (rank(role) >= rank("author") || u === run.createdBy))
            .map(([u]) => m.users.get(u)!);
          if (able.length && chance(0.5)) {
            const by = actor(pick(able));
            const pc = precondition();
            if (pc.fails) {
              // Held, so still running: a false precondition is a 412 that cancels nothing.
              const f = await http(by, "POST", `/api/v1/orgs/${org}/runs/${run.id}/cancel/`, {
                headers: pc.headers,
              });
              expectStatus(f, by.token.revoked ? 401 : 412);
            }
            const c = await http(by, "POST", `/api/v1/orgs/${org}/runs/${run.id}/cancel/`);
            if (by.token.revoked) expectStatus(c, 401);
            else {
              expectStatus(c, 200);
              check(c.json.status === "canceled", `held run canceled: ${c.json.status}`);
              run.final = "canceled";
              audit("run.cancel", org, by);
            }
          }
        } finally {
          gate.open(chance(0.5) ? "pass" : "fail");
          run.gate = undefined;
          st.heldRun = null;
        }
        // Let go: it ends on its own (read by a member who may).
        const readable =
          !o.suspended && [...o.members.keys()].some((u) => liveTokens(m.users.get(u)!).length);
        if (!run.final && readable) {
          const reader = monitorOf(org);
          for (let i = 0; i < 3000 && !run.final; i++) {
            const g = await http(reader, "GET", `/api/v1/orgs/${org}/runs/${run.id}/`);
            if (["queued", "running"].includes(g.json.status)) await Bun.sleep(10);
            else {
              check(["succeeded", "failed"].includes(g.json.status), `a released run ended ${g.json.status}`);
              run.final = g.json.status;
            }
          }
          check(run.final, "a released run did not end");
        }
      },
    ],
  };
}
