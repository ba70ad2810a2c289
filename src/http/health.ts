// Unauthenticated liveness and readiness probes (CONTRACT §1).
import type { Db } from "../db/program.ts";
import { Elysia, t } from "elysia";
import { AppError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { ErrorSchema } from "./schemas.ts";

export function healthRoutes(db: Db, isDraining: () => boolean) {
  return new Elysia()
    .get("/healthz", () => ({ status: "ok", version: VERSION }), {
      response: { 200: t.Object({ status: t.String(), version: t.String() }) },
      detail: { tags: ["Health"], summary: "Liveness" },
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
        response: {
          200: t.Object({ status: t.String(), version: t.String(), database: t.String() }),
          503: ErrorSchema,
        },
        detail: { tags: ["Health"], summary: "Readiness: the database answers" },
      },
    );
}
