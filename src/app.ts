// createApp(deps): the error plugin first, then each feature's routes. It never listens
// (STYLE: Fastify) — src/main.ts and the tests do.
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { adminRoutes } from "./admin/routes.ts";
import type { Deps } from "./deps.ts";
import { type SessionAuth, authPlugin } from "./http/auth.ts";
import { errorPlugin, methodMatcher } from "./http/errors.ts";
import { healthRoutes } from "./http/health.ts";
import { orgRoutes } from "./orgs/routes.ts";
import { runRoutes } from "./runs/routes.ts";
import { tokenRoutes } from "./tokens/routes.ts";
import { meRoutes } from "./users/routes.ts";
import { validatorRoutes } from "./validators/routes.ts";
import { VERSION } from "./version.ts";
import { workflowRoutes } from "./workflows/routes.ts";

export interface AppOptions {
  sessions?: SessionAuth;
  isDraining?: () => boolean;
}

export function createApp(deps: Deps, opts: AppOptions = {}) {
  let matcher: (path: string) => string[] = () => [];
  const auth = authPlugin({ tokens: deps.tokens, sessions: opts.sessions });
  // normalize off: unknown body fields are refused (400) rather than silently dropped.
  const app = new Elysia({ name: "assay", normalize: false })
    .use(errorPlugin(deps.log, () => matcher))
    .onAfterHandle({ as: "global" }, ({ set }) => {
      // API answers are per-user: never cached by a shared cache.
      set.headers["cache-control"] ??= "no-store";
    })
    .use(
      openapi({
        path: "/api/docs",
        specPath: "/api/v1/openapi.json",
        documentation: {
          info: {
            title: "Assay API",
            version: VERSION,
            description:
              "Validation workflows over a REST API. Every error is {detail, code, status, errors}.",
          },
          components: {
            securitySchemes: {
              bearer: { type: "http", scheme: "bearer", description: "An API token: assay_…" },
            },
          },
        },
      }),
    )
    .use(healthRoutes(deps.db, opts.isDraining ?? (() => false)))
    .use(meRoutes(deps, auth))
    .use(tokenRoutes(deps, auth))
    .use(orgRoutes(deps, auth))
    .use(workflowRoutes(deps, auth))
    .use(runRoutes(deps, auth))
    .use(validatorRoutes(auth))
    .use(adminRoutes(deps, auth));
  matcher = methodMatcher(app.routes);
  return app;
}
export type App = ReturnType<typeof createApp>;
