// Workflows, their steps and versions: create, edit (PATCH, PUT, If-Match), rename, delete, slug reuse, restore.
import { type Ctx, type Json, type Ops, SLUGS, SYNTAX, SCHEMA } from "./context.ts";
import { type MStep, createdWorkflow, definition } from "./model.ts";

export function workflowOps(c: Ctx): Ops {
  const {
    rnd,
    int,
    pick,
    chance,
    m,
    check,
    http,
    expectStatus,
    audit,
    who,
    workflowIdent,
    wfPath,
    walk,
    sameList,
    byCode,
  } = c;
  return {
    listWorkflows: [
      6,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const want = m.access(a.user, a.token, org, "viewer") || 200;
        const { status, items } = await walk(a, `/api/v1/orgs/${org}/workflows/`, want);
        if (status !== 200 || !o) return;
        const model = [...o.workflows.values()].sort((x, y) => byCode(x.slug, y.slug));
        sameList(
          `workflows of ${org}`,
          items.map((w) => [w.id, w.slug, w.version, w.status, w.step_count, w.org_slug]),
          model.map((w) => [w.id, w.slug, w.version, w.status, w.steps.length, org]),
        );
      },
    ],
    listVersions: [
      3,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const want = m.access(a.user, a.token, org, "viewer") || (w ? 200 : 404);
        const { status, items } = await walk(a, `${wfPath(org, ident)}versions/`, want);
        if (status !== 200 || !w) return;
        const model = Array.from({ length: w.version }, (_, i) => [w.version - i, i === 0]);
        sameList(
          `versions of ${org}/${w.slug}`,
          items.map((v) => [v.version, v.is_current]),
          model,
        );
      },
    ],
    getWorkflow: [
      5,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const access = m.access(a.user, a.token, org, "viewer");
        const inm = w && chance(0.3) ? `"${chance(0.5) ? w.version : w.version + 1}"` : null;
        const r = await http(a, "GET", wfPath(org, ident), inm ? { headers: { "if-none-match": inm } } : {});
        if (access) return expectStatus(r, access);
        if (!w) return expectStatus(r, 404);
        if (inm === `"${w.version}"`) return expectStatus(r, 304);
        expectStatus(r, 200);
        check(
          r.headers.get("etag") === `"${w.version}"`,
          `ETag ${r.headers.get("etag")} for version ${w.version}`,
        );
        const got = [
          r.json.id,
          r.json.slug,
          r.json.name,
          r.json.description,
          r.json.status,
          r.json.version,
          r.json.org_slug,
          r.json.steps.map((x: Json) => [x.id, x.order, x.name, x.is_active]),
        ];
        const mod = [
          w.id,
          w.slug,
          w.name,
          w.description,
          w.status,
          w.version,
          org,
          w.steps.map((x, i) => [x.id, i + 1, x.name, x.is_active]),
        ];
        sameList(`workflow ${org}/${ident}`, got, mod);
      },
    ],
    createWorkflow: [
      5,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const slug = pick(SLUGS);
        const status = chance(0.15) ? "inactive" : "active";
        const steps = chance(0.1) ? [] : chance(0.5) ? [SYNTAX] : [SYNTAX, SCHEMA];
        const body = { slug, name: `Flow ${slug}`, allowed_file_types: ["JSON"], status, steps };
        const r = await http(a, "POST", `/api/v1/orgs/${org}/workflows/`, { body });
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (m.workflowBy(o!, slug)) return expectStatus(r, 409, "conflict");
        expectStatus(r, 201);
        check(
          r.headers.get("location")?.endsWith(`/api/v1/orgs/${org}/workflows/${slug}/`),
          "Location of a new workflow",
        );
        check(
          r.json.version === 1 && r.json.slug === slug && r.json.steps.length === steps.length,
          "created workflow differs from the request",
        );
        const w = createdWorkflow(r.json, { slug, name: body.name, description: r.json.description, status });
        check(
          ![...m.orgs.values()].some((x) => x.workflows.has(w.id) || x.deletedWorkflows.has(w.id)),
          `workflow id ${w.id} reused`,
        );
        o!.workflows.set(w.id, w);
        audit("workflow.create", org, a);
      },
    ],
    editWorkflow: [
      7,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const put = chance(0.25);
        const patch: Record<string, unknown> = {};
        if (chance(0.4)) patch.name = pick(["Alpha", "Beta", w?.name ?? "Gamma"]);
        if (chance(0.3)) patch.description = pick(["", "about it", "more"]);
        if (chance(0.3)) patch.status = pick(["active", "inactive"]);
        if (chance(0.2)) patch.slug = pick(SLUGS);
        let body: Record<string, unknown> = patch;
        if (put) {
          body = {
            slug: patch.slug ?? w?.slug ?? "w1",
            name: patch.name ?? "Put",
            description: patch.description ?? "",
            allowed_file_types: ["JSON"],
            status: patch.status ?? "active",
            steps: (chance(0.5) && w ? w.steps : [SYNTAX]).map((x) => ({
              name: x.name,
              validator: x.validator,
              config: x.config,
              is_active: (x as Partial<MStep>).is_active ?? true,
            })),
          };
        }
        const headers: Record<string, string> = {};
        const im = rnd();
        if (w && im < 0.25) headers["if-match"] = `"${w.version}"`;
        else if (w && im < 0.35) headers["if-match"] = `"${w.version - 1 - int(2)}"`;
        else if (im < 0.4) headers["if-match"] = "*";
        else if (w && im < 0.45) headers["if-none-match"] = `"${w.version}"`;
        const r = await http(a, put ? "PUT" : "PATCH", wfPath(org, ident), { body, headers });
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (!w) return expectStatus(r, 404);
        if (headers["if-match"] && headers["if-match"] !== "*" && headers["if-match"] !== `"${w.version}"`)
          return expectStatus(r, 412);
        if (headers["if-none-match"]) return expectStatus(r, 412);
        const slug = (body.slug as string | undefined) ?? w.slug;
        const taken = [...o!.workflows.values()].find((x) => x.slug === slug && x !== w);
        if (taken) return expectStatus(r, 409, "conflict");
        expectStatus(r, 200);
        const before = definition(w, { ids: true });
        const oldSlug = w.slug;
        w.slug = slug;
        if (body.name !== undefined) w.name = body.name as string;
        if (body.description !== undefined) w.description = body.description as string;
        if (body.status !== undefined) w.status = body.status as "active" | "inactive";
        let stepsSame = true;
        if (put) {
          const got = r.json.steps.map((x: Json) => ({
            id: x.id,
            name: x.name,
            validator: x.validator,
            config: x.config,
            is_active: x.is_active,
          }));
          const sent = (body.steps as MStep[]).map((x) =>
            JSON.stringify([x.name, x.validator, x.config, x.is_active]),
          );
          sameList(
            "PUT steps",
            got.map((x: MStep) => JSON.stringify([x.name, x.validator, x.config, x.is_active])),
            sent,
          );
          stepsSame = JSON.stringify(got) === JSON.stringify(w.steps);
          w.steps = got;
        }
        const changed = definition(w, { ids: true }) !== before || slug !== oldSlug;
        if (changed) {
          w.version++;
          w.history.push(definition(w, { ids: true }));
          if (slug !== oldSlug)
            for (const h of [...o!.webhooks.values()].sort((x, y) => x.id - y.id))
              if (h.workflow_slugs.includes(oldSlug)) {
                h.workflow_slugs = [...new Set(h.workflow_slugs.map((x) => (x === oldSlug ? slug : x)))];
                audit("webhook.update", org, a);
              }
          audit("workflow.update", org, a);
        }
        void stepsSame;
        check(r.json.version === w.version, `version ${r.json.version} after the edit, model ${w.version}`);
        check(r.headers.get("etag") === `"${w.version}"`, "ETag of an edit's answer");
        sameList(
          "edited workflow",
          [r.json.slug, r.json.name, r.json.description, r.json.status],
          [w.slug, w.name, w.description, w.status],
        );
      },
    ],
    deleteWorkflow: [
      2,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const headers: Record<string, string> = {};
        if (w && chance(0.3)) headers["if-match"] = `"${w.version - int(2)}"`;
        const r = await http(a, "DELETE", wfPath(org, ident), { headers });
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (!w) return expectStatus(r, 404);
        if (headers["if-match"] && headers["if-match"] !== `"${w.version}"`) return expectStatus(r, 412);
        expectStatus(r, 204);
        o!.workflows.delete(w.id);
        o!.deletedWorkflows.set(w.id, w.slug);
        audit("workflow.delete", org, a);
      },
    ],
    addStep: [
      3,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const order = w && chance(0.3) ? 1 + int(w.steps.length + 2) : undefined;
        const body = {
          ...(chance(0.5) ? { ...SYNTAX, name: `s${int(9)}` } : { ...SCHEMA, is_active: chance(0.8) }),
          ...(order ? { order } : {}),
        };
        const r = await http(a, "POST", `${wfPath(org, ident)}steps/`, { body });
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (!w) return expectStatus(r, 404);
        expectStatus(r, 201);
        const at = Math.min(Math.max((order ?? w.steps.length + 1) - 1, 0), w.steps.length);
        w.steps.splice(at, 0, {
          id: r.json.id,
          name: body.name,
          validator: body.validator,
          config: body.config,
          is_active: (body as Json).is_active ?? true,
        });
        check(r.json.order === at + 1, `new step's order ${r.json.order}, model ${at + 1}`);
        w.version++;
        w.history.push(definition(w, { ids: true }));
        audit("step.create", org, a);
      },
    ],
    editStep: [
      4,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const everyStep = [...m.orgs.values()].flatMap((x) =>
          [...x.workflows.values()].flatMap((y) => y.steps),
        );
        const st =
          w?.steps.length && chance(0.85) ? pick(w.steps) : everyStep.length ? pick(everyStep) : undefined;
        const sid = st?.id ?? 999999;
        const own = w?.steps.find((x) => x.id === sid);
        const del = chance(0.35);
        const body: { is_active?: boolean; name?: string; order?: number } = {
          ...(chance(0.6) ? { is_active: chance(0.5) } : {}),
          ...(chance(0.5) ? { name: pick(["a", "b", own?.name ?? "c"]) } : {}),
        };
        if (w && chance(0.3)) body.order = 1 + int(w.steps.length + 1);
        const r = await http(
          a,
          del ? "DELETE" : "PATCH",
          `${wfPath(org, ident)}steps/${sid}/`,
          del ? {} : { body },
        );
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (!w || !own) return expectStatus(r, 404);
        if (del) {
          expectStatus(r, 204);
          w.steps = w.steps.filter((x) => x !== own);
          w.version++;
          w.history.push(definition(w, { ids: true }));
          audit("step.delete", org, a);
          return;
        }
        expectStatus(r, 200);
        const before = JSON.stringify(w.steps);
        const { order, ...fields } = body;
        Object.assign(own, fields);
        if (order !== undefined) {
          w.steps.splice(w.steps.indexOf(own), 1);
          w.steps.splice(Math.min(order - 1, w.steps.length), 0, own);
        }
        if (JSON.stringify(w.steps) !== before) {
          w.version++;
          w.history.push(definition(w, { ids: true }));
          audit("step.update", org, a);
        }
        sameList(
          "edited step",
          [r.json.id, r.json.name, r.json.is_active, r.json.order],
          [own.id, own.name, own.is_active, w.steps.indexOf(own) + 1],
        );
      },
    ],
    getVersion: [
      2,
      async () => {
        const { a, org } = who("viewer");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const n = 1 + int((w?.version ?? 2) + 1);
        const r = await http(a, "GET", `${wfPath(org, ident)}versions/${n}/`);
        const access = m.access(a.user, a.token, org, "viewer");
        if (access) return expectStatus(r, access);
        if (!w || n > w.version) return expectStatus(r, 404);
        expectStatus(r, 200);
        if (!w.history[n - 1]) return; // a burst's intermediate version
        const d = JSON.parse(w.history[n - 1]!);
        sameList(
          `version ${n}`,
          [r.json.version, r.json.name, (r.json.steps ?? r.json.definition?.steps)?.map((x: Json) => x.name)],
          [n, d.name, d.steps.map((x: Json) => x.name)],
        );
      },
    ],
    restoreVersion: [
      2,
      async () => {
        const { a, org } = who("author");
        const o = m.org(org);
        const ident = workflowIdent(o);
        const w = o && m.workflowBy(o, ident);
        const known = w ? w.history.flatMap((h, i) => (h ? [i + 1] : [])) : [1];
        const n = pick(known);
        const r = await http(a, "POST", `${wfPath(org, ident)}versions/${n}/restore/`);
        const access = m.access(a.user, a.token, org, "author");
        if (access) return expectStatus(r, access);
        if (!w) return expectStatus(r, 404);
        const then = JSON.parse(w.history[n - 1]!);
        const now = JSON.parse(definition(w, { ids: true }));
        const strip = (d: Json, ids: boolean) =>
          JSON.stringify({
            ...d,
            status: undefined,
            steps: d.steps.map((x: Json) => ({ ...x, id: ids ? x.id : undefined })),
          });
        const same = strip(then, true) === strip(now, true);
        const differ = strip(then, false) !== strip(now, false);
        expectStatus(r, same ? 200 : differ ? 201 : [200, 201]);
        if (r.status === 201) {
          w.name = then.name;
          w.description = then.description;
          w.steps = r.json.steps.map((x: Json) => ({
            id: x.id,
            name: x.name,
            validator: x.validator,
            config: x.config,
            is_active: x.is_active,
          }));
          sameList(
            "restored steps",
            w.steps.map((x) => [x.name, x.validator, x.is_active]),
            then.steps.map((x: Json) => [x.name, x.validator, x.is_active]),
          );
          for (const x of w.steps) {
            const was = then.steps.find((y: Json) => y.id === x.id);
            check(!was || JSON.stringify(was.config) === JSON.stringify(x.config), "restored step's config");
          }
          w.version++;
          w.history.push(definition(w, { ids: true }));
          audit("workflow.restore", org, a);
        }
        check(
          r.json.version === w.version && r.json.status === w.status,
          `restore answered version ${r.json.version} status ${r.json.status}, model ${w.version} ${w.status}`,
        );
      },
    ],
  };
}
