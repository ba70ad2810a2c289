// Start and stop one Assay server: open db → migrate → services → app → listen. Used by
// `assay serve` and by the tests (temp data dir, port 0).
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { closeDatabase, openDatabase } from "./db/open.ts";
import { createDeps } from "./deps.ts";
import { createLogger } from "./lib/log.ts";

export interface RunningServer {
  url: string;
  port: number;
  deps: ReturnType<typeof createDeps>;
  /** Graceful: stop accepting, finish in-flight requests, checkpoint and close the database. */
  stop(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config.log_level);
  const db = openDatabase(config.data_dir);
  // Built here, next to main.ts: in the compiled binary a relative Worker path only resolves
  // from the project root, a URL from import.meta.url resolves everywhere (STYLE: traps).
  const deps = createDeps(config, db, log, { workerUrl: new URL("./jobs/worker.ts", import.meta.url) });
  await Promise.race([
    deps.pool!.ready(),
    Bun.sleep(30_000).then(() => {
      throw new Error("validation workers did not start within 30 s");
    }),
  ]);
  await deps.executor.start();
  let draining = false;
  const app = createApp(deps, { isDraining: () => draining });
  app.listen({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: config.max_payload_bytes + 1024 * 1024,
  });
  const server = app.server!;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  log.info("listening", { url, data_dir: config.data_dir });
  let stopped: Promise<void> | null = null;
  return {
    url,
    port: server.port!,
    deps,
    stop() {
      stopped ??= (async () => {
        draining = true;
        await server.stop(false);
        // Running steps get the grace period; queued runs stay queued for the next start.
        await deps.executor.close(config.shutdown_grace_ms);
        await deps.tokens.close();
        closeDatabase(db);
        log.info("stopped");
      })();
      return stopped;
    },
  };
}
