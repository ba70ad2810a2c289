// The first run in the browser: while the instance has no user, the web app shows a setup form
// (first admin with a password, first org) instead of the sign-in form. Only whoever can read
// the server's log may use it: the form needs the one-time setup code printed there at start
// (src/cli/main.ts). Success signs the new admin in. Design: docs/decisions.md (first run).
import { Elysia, t } from "elysia";
import { anonymousActor } from "../audit/actor.ts";
import type { Deps } from "../deps.ts";
import { conflict, invalid } from "../errors.ts";
import { clientIp } from "../http/client-ip.ts";
import { ipKey } from "../http/ratelimit.ts";
import { describe, header } from "../http/openapi/components.ts";
import { documentedWith } from "../http/openapi/named.ts";
import { BOUNDS, Chars, errorResponses } from "../http/schemas.ts";
import { preconditionsPlugin } from "../http/preconditions.ts";
import { publicOrigin } from "../http/url.ts";
import { orgNameProblem, orgSlugProblem } from "../orgs/service.ts";
import { codeMatches } from "../setup/service.ts";
import { newPasswordProblem, usernameProblem } from "../users/service.ts";
import { UserOut, presentUser } from "../users/routes.ts";
import { type LoginLimits, DEFAULT_LOGIN_LIMITS, createLoginLimiter } from "./login-limit.ts";
import { SESSION_TTL_MS, createSessions, isHttps, sessionCookie } from "./sessions.ts";

/** The code printed at start; null once used (or when the instance had users at start). */
export interface SetupCode {
  code: string | null;
}

const str = (max: number) => Chars(max, { error: `must be a string of at most ${max} characters` });

export function setupRoutes(
  deps: Deps,
  setup: SetupCode,
  limits: LoginLimits = { ...DEFAULT_LOGIN_LIMITS, disabled: deps.config.rate_limit_disabled },
) {
  const sessions = createSessions(deps.db, deps.users, deps.config.base_url);
  const limiter = createLoginLimiter(limits, deps.db.dialect === "postgres" ? deps.db : null);
  // Public: the instance has no user yet (the POST is guarded by the one-time setup code).
  const detail = { tags: ["Web session"], security: [] };
  const stillNeeded = async () => {
    if (!(await deps.setup.needed()))
      throw conflict("This instance is already set up; sign in, or use `assay users` and `orgs`.");
  };
  return new Elysia()
    .use(preconditionsPlugin)
    .get("/api/v1/setup/", async () => ({ needed: await deps.setup.needed() }), {
      response: { 200: t.Object({ needed: t.Boolean() }), ...errorResponses(500) },
      detail: {
        ...detail,
        operationId: "getSetupStatus",
        summary: "Whether the instance still needs its first administrator (no user yet)",
      },
    })
    .post(
      "/api/v1/setup/",
      async ({ body, request, server, set }) => {
        await stillNeeded();
        const ip = clientIp(request, server, deps.config.trust_proxy);
        // Keyed as the sign-in budget is (auth-routes.ts): the client's address, not the proxy's.
        await limiter.attempt(ipKey(ip ?? "unknown"), "setup");
        if (!setup.code || !codeMatches(setup.code, body.setup_code))
          throw invalid("The setup code is not the one in the server's log.", [
            {
              field: "setup_code",
              code: "incorrect",
              message: "Copy the setup code from the log of the running server (printed at start).",
            },
          ]);
        const created = await deps.setup.run(
          {
            org_slug: body.org_slug,
            org_name: body.org_name,
            username: body.username,
            password: body.password,
          },
          { withToken: false, passwordRequired: true },
          anonymousActor(ip, body.username),
        );
        setup.code = null;
        const user = (await deps.users.get(created.userId))!;
        const { secret, session } = await sessions.start(user, ip, null);
        set.headers["set-cookie"] = sessionCookie(
          secret,
          SESSION_TTL_MS / 1000,
          isHttps(request, deps.config.base_url),
        );
        set.status = 201;
        // What was created that a client can read: the first organization.
        set.headers.location = `${publicOrigin(deps.config.base_url, request)}/api/v1/orgs/${body.org_slug}/`;
        return {
          user: presentUser(user),
          csrf_token: session.csrf,
          expires_at: session.expires_at,
          org_slug: body.org_slug,
        };
      },
      {
        body: t.Object(
          {
            // The service checks the real bounds (and reports them together): documented here.
            setup_code: str(100),
            // With the service's own checks (setup/service.ts inputProblems), for a body the schema
            // refuses: its 400 lists them too (src/http/errors.ts, boundItems).
            username: documentedWith(str(200), BOUNDS.username, usernameProblem),
            password: documentedWith(str(1024), BOUNDS.password, newPasswordProblem),
            org_slug: documentedWith(str(100), BOUNDS.orgSlug, orgSlugProblem),
            org_name: t.Optional(documentedWith(str(200), BOUNDS.name, orgNameProblem)),
          },
          { additionalProperties: false },
        ),
        // Once set up, the 409 comes first, as it would without If-Match (src/http/preconditions.ts).
        preconditions: stillNeeded,
        response: {
          201: t.Object({
            user: UserOut,
            csrf_token: t.String(),
            expires_at: t.String(),
            org_slug: t.String(),
          }),
          ...errorResponses(400, 409, 429, 500),
        },
        detail: describe({
          ...detail,
          operationId: "setUpInstance",
          summary:
            "First run: create the instance administrator and the first org with the setup code from the server log; signs in",
          responses: { 201: { headers: { "Set-Cookie": header("SetCookie") } } },
        }),
      },
    );
}
