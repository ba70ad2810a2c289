// Unauthenticated liveness and readiness probes (CONTRACT §1).
import type { Db } from "../db/program.ts";
import { Elysia, t } from "elysia";
import { AppError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { named } from "./openapi/named.ts";
import { ErrorSchema } from "./schemas.ts";

const Health = named("Health", t.Object({ status: t.String({ description: "ok" }), version: t.String() }));
const Readiness = named(
  "Readiness",
  t.Object({
    status: t.String({ description: "ready" }),
    version: t.String(),
    database: t.String({ description: "sqlite or postgres" }),
  }),
);

export function healthRoutes(db: Db, isDraining: () => boolean) {
  return new Elysia()
    .get("/healthz", () => ({ status: "ok", version: VERSION }), {
      response: { 200: Health },
      detail: { tags: ["Health"], operationId: "getHealth", summary: "Liveness", security: [] },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        if (isDraining()) throw new AppError(503, "service_unavailable", "The server is shutting down.");
        if (!(await db.ping()))
          throw new AppError(503, "service_unavailable", "The database is not available.", [], {
            "Retry-After": "5",
          });
        set.headers["cache-control"] = "no-store";
        return { status: "ready", version: VERSION, database: db.dialect };
      },
      {
        response: { 200: Readiness, 503: ErrorSchema },
        detail: {
          tags: ["Health"],
          operationId: "getReadiness",
          summary: "Readiness: the database answers",
          security: [],
        },
      },
    );
}
