// Preloaded by `bun test` (bunfig.toml): after the last test file of the run, the throwaway
// PostgreSQL cluster the run shared (test/helpers/pg-cluster.ts) is stopped and its directory
// removed. An afterAll in a preload runs once, after every file; `bun test` fires no process
// "exit" event, so without this every run left a cluster running.
import { afterAll } from "bun:test";
import { stopSharedPgCluster } from "./pg-cluster.ts";

afterAll(() => stopSharedPgCluster());
