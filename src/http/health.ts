// Unauthenticated liveness and readiness probes (CONTRACT §1).
import type { Database } from "bun:sqlite";
import { Elysia, t } from "elysia";
import { AppError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { named } from "./openapi/named.ts";
import { ErrorSchema } from "./schemas.ts";

const Health = named(
  "Health",
  t.Object({ status: t.String({ description: "ok, or ready" }), version: t.String() }),
);

export function healthRoutes(db: Database, isDraining: () => boolean) {
  const ping = db.prepare("SELECT 1");
  return new Elysia()
    .get("/healthz", () => ({ status: "ok", version: VERSION }), {
      response: { 200: Health },
      detail: { tags: ["Health"], operationId: "getHealth", summary: "Liveness", security: [] },
    })
    .get(
      "/readyz",
      () => {
        if (isDraining()) throw new AppError(503, "service_unavailable", "The server is shutting down.");
        try {
          ping.get();
        } catch {
          throw new AppError(503, "service_unavailable", "The database is not available.");
        }
        return { status: "ready", version: VERSION };
      },
      {
        response: { 200: Health, 503: ErrorSchema },
        detail: {
          tags: ["Health"],
          operationId: "getReadiness",
          summary: "Readiness: the database answers",
          security: [],
        },
      },
    );
}
