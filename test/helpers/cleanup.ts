// Preloaded by `bun test` (bunfig.toml). An afterAll in a preload runs once, after the last test
// file; `bun test` fires no process "exit" event, so this is the run's only end hook. It stops
// the throwaway PostgreSQL cluster the run shared (test/helpers/pg-cluster.ts) and removes its
// directory, and removes the helpers' temp dirs a test left behind (test/helpers/temp.ts).
import { afterAll } from "bun:test";
import { stopSharedPgCluster } from "./pg-cluster.ts";
import { removeTestTempDirs } from "./temp.ts";

afterAll(() => {
  stopSharedPgCluster();
  removeTestTempDirs();
});
