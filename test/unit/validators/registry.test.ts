import { describe, expect, test } from "bun:test";
import Schema from "typebox/schema";
import {
  checkStepConfig,
  DEFAULT_MAX_FINDINGS,
  getValidator,
  maxFindingsOf,
  VALIDATORS,
} from "../../../src/validators/registry.ts";

describe("registry", () => {
  test("the catalogue has the contract's six built-in validators and schematron (issue #25)", () => {
    expect(VALIDATORS.map((v) => v.slug)).toEqual([
      "syntax",
      "json_schema",
      "xml_schema",
      "schematron",
      "csv_table",
      "assertions",
      "text_rules",
    ]);
    expect(getValidator("json_schema")?.supportedFileTypes).toEqual(["JSON", "YAML"]);
    expect(getValidator("schematron")?.supportedFileTypes).toEqual(["XML"]);
    expect(getValidator("nope")).toBeUndefined();
    expect(getValidator("syntax")?.supportedFileTypes).toEqual(["JSON", "XML", "YAML", "CSV", "TEXT"]);
  });

  test("every configSchema is a valid 2020-12 schema and lists the common keys", () => {
    const meta = Schema.Compile(Schema.Meta["https://json-schema.org/draft/2020-12/schema"] as never);
    for (const v of VALIDATORS) {
      expect(meta.Check(v.configSchema)).toBe(true);
      const props = v.configSchema.properties as Record<string, unknown>;
      expect(Object.keys(props)).toContain("max_findings");
      expect(Object.keys(props)).toContain("timeout_ms");
    }
  });

  test("common keys are checked by the registry", () => {
    expect(checkStepConfig("syntax", {})).toEqual([]);
    expect(checkStepConfig("syntax", { max_findings: 10, timeout_ms: 5000 })).toEqual([]);
    expect(checkStepConfig("syntax", { max_findings: 0 })).toEqual([
      { field: "max_findings", code: "invalid", message: "must be an integer from 1 to 10000" },
    ]);
    expect(checkStepConfig("syntax", { timeout_ms: 1.5 })[0].field).toBe("timeout_ms");
    expect(checkStepConfig("syntax", { timeout_ms: 600_001 })[0].field).toBe("timeout_ms");
    expect(checkStepConfig("syntax", { extra: 1 })).toEqual([
      { field: "extra", code: "unknown_key", message: "is not a known key" },
    ]);
  });

  test("config must be an object; unknown validator", () => {
    expect(checkStepConfig("syntax", [])[0].code).toBe("invalid");
    expect(checkStepConfig("syntax", null)[0].code).toBe("invalid");
    expect(checkStepConfig("nope", {})[0]).toMatchObject({ field: "validator", code: "unknown_validator" });
  });

  test("max_findings default", () => {
    expect(DEFAULT_MAX_FINDINGS).toBe(1000);
    expect(maxFindingsOf({})).toBe(1000);
    expect(maxFindingsOf({ max_findings: 7 })).toBe(7);
  });
});
