// `assay serve` warns of ASSAY_* variables that name no setting (src/config.ts,
// unknownEnvironment): a mistyped one would otherwise be ignored without a word.
import { describe, expect, test } from "bun:test";
import { unknownEnvironment } from "../../../src/config.ts";

describe("unknownEnvironment", () => {
  test("names each unknown ASSAY_* variable with the setting it most likely meant", () => {
    expect(
      unknownEnvironment({
        ASSAY_DATA_DIR: "/d",
        ASSAY_PORTT: "1",
        ASSAY_WORKER: "2",
        ASSAY_MAX_PAYLOAD: "1",
        ASSAY_FROBNICATE: "1",
        PATH: "/bin",
      }),
    ).toEqual([
      { name: "ASSAY_FROBNICATE", meant: null },
      { name: "ASSAY_MAX_PAYLOAD", meant: "ASSAY_MAX_PAYLOAD_BYTES" },
      { name: "ASSAY_PORTT", meant: "ASSAY_PORT" },
      { name: "ASSAY_WORKER", meant: "ASSAY_WORKERS" },
    ]);
  });

  test("the CI client's, tests' and the bench's variables are not settings and not warned of", () => {
    expect(
      unknownEnvironment({
        ASSAY_TOKEN: "t",
        ASSAY_SERVER: "s",
        ASSAY_TEST_GATES_DIR: "g",
        ASSAY_BENCH_BIN: "b",
      }),
    ).toEqual([]);
  });
});
