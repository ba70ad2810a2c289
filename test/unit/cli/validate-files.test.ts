// `assay validate` holds at most --jobs files' bytes at once: each file is read just before its
// run and dropped after it (twelve 20 MB files were all read up front, 723 MB with --jobs 1).
import { expect, test } from "bun:test";
import { type PlannedFile, eachInput } from "../../../src/cli/validate/files.ts";
import { shownUrl } from "../../../src/cli/shown-url.ts";

const planned = (n: number): PlannedFile[] =>
  Array.from({ length: n }, (_, i) => ({
    path: `f${i}.json`,
    label: `f${i}.json`,
    name: `f${i}.json`,
    contentType: "application/json",
  }));

for (const jobs of [1, 3])
  test(`--jobs ${jobs}: never more than ${jobs} files read and not yet done; results in order`, async () => {
    let held = 0;
    let most = 0;
    const results = await eachInput(
      planned(8),
      jobs,
      async (f) => {
        held++;
        most = Math.max(most, held);
        return { label: f.label, name: f.name, contentType: f.contentType, bytes: new Uint8Array(1) };
      },
      async (f) => {
        // The other workers get their turns while this run is "in flight".
        for (let i = 0; i < 5; i++) await Promise.resolve();
        held--;
        return f.label;
      },
    );
    expect(most).toBe(jobs);
    expect(results).toEqual(planned(8).map((f) => f.label));
  });

test("URLs in messages carry no user:password", () => {
  expect(shownUrl("http://ciuser:s3cret@127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
  expect(shownUrl("https://u:p@h.example/api/v1/orgs/a/runs/1/report/?format=html")).toBe(
    "https://h.example/api/v1/orgs/a/runs/1/report/?format=html",
  );
  expect(shownUrl("http://h.example:1")).toBe("http://h.example:1");
  expect(shownUrl("not a url")).toBe("not a url");
});
