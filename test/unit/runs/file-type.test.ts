// checkFileType: a version's verdict per file type is computed once and kept (src/runs/service.ts);
// the kept verdict must be the one the version's steps and the instance's validators give.
import { expect, test } from "bun:test";
import { AppError } from "../../../src/errors.ts";
import { checkFileType } from "../../../src/runs/service.ts";
import type { ValidatorDef } from "../../../src/validators/types.ts";
import type { WorkflowVersion } from "../../../src/workflows/types.ts";

const version = (validator: string, active = true): WorkflowVersion => ({
  workflow_id: 1,
  version: 1,
  slug: "w",
  allowed_file_types: ["JSON", "TEXT"],
  fail_fast: false,
  steps: [{ id: 1, order: 1, name: "s", validator, is_active: active, config: {} }],
});

function refusal(f: () => void): { status: number; code: string; message: string } | null {
  try {
    f();
    return null;
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { status: e.status, code: e.errorCode, message: e.message };
  }
}

test("a type the workflow does not allow is refused, every time, with the same whole error", () => {
  const def = version("json_schema");
  for (let i = 0; i < 3; i++)
    expect(refusal(() => checkFileType(def, "XML"))).toEqual({
      status: 400,
      code: "file_type_unsupported",
      message:
        'This workflow accepts JSON, TEXT submissions; this one is XML. Step 1 "s" (json_schema) does not support XML submissions either.',
    });
  expect(refusal(() => checkFileType(def, "JSON"))).toBeNull();
  // No step that could not read it: the allowed types alone are the reason.
  expect(refusal(() => checkFileType(version("syntax"), "XML"))?.message).toBe(
    "This workflow accepts JSON, TEXT submissions; this one is XML.",
  );
});

test("a step whose validator does not take the type refuses it; an inactive step does not", () => {
  const def = version("json_schema");
  expect(refusal(() => checkFileType(def, "TEXT"))?.message).toBe(
    'Step 1 "s" (json_schema) does not support TEXT submissions.',
  );
  expect(refusal(() => checkFileType(version("json_schema", false), "TEXT"))).toBeNull();
});

test("the verdict depends on the validators the instance adds, not only on the version", () => {
  const def = version("acme_text");
  const acme = { slug: "acme_text", supportedFileTypes: ["TEXT"] } as unknown as ValidatorDef;
  expect(refusal(() => checkFileType(def, "TEXT"))?.message).toBe(
    'Step 1 "s" (acme_text) does not support TEXT submissions.',
  );
  const extra = [acme];
  expect(refusal(() => checkFileType(def, "TEXT", extra))).toBeNull();
  // Kept per validator set: the built-in set's refusal did not leak into the other, nor back.
  expect(refusal(() => checkFileType(def, "TEXT"))).not.toBeNull();
  expect(refusal(() => checkFileType(def, "TEXT", extra))).toBeNull();
});
