// The web app's upload: a browser type the API does not read is replaced by the extension's
// (src/web/client/upload-type.ts). Windows with Excel calls a .csv application/vnd.ms-excel.
import { expect, test } from "bun:test";
import { uploadType } from "../../../src/web/client/upload-type.ts";

test("a type the API reads is kept (null: send the browser's)", () => {
  expect(uploadType("a.csv", "text/csv", ["CSV"])).toBeNull();
  expect(uploadType("a.xml", "application/atom+xml", ["XML"])).toBeNull();
  expect(uploadType("a.json", "Application/JSON; charset=utf-8", ["JSON"])).toBeNull();
});

test("another type, or none, is replaced by the extension's", () => {
  expect(uploadType("orders.csv", "application/vnd.ms-excel", ["CSV"])).toBe("text/csv");
  expect(uploadType("a.TSV", "", ["CSV"])).toBe("text/tab-separated-values");
  expect(uploadType("a.yml", "application/octet-stream", ["YAML"])).toBe("application/yaml");
  expect(uploadType("s.xsd", "application/x-xsd", ["XML"])).toBe("application/xml");
});

test("no known extension: the workflow's first allowed type", () => {
  expect(uploadType("data", "application/vnd.ms-excel", ["YAML", "JSON"])).toBe("application/yaml");
  expect(uploadType("a.constructor", "", [])).toBe("text/plain");
});
