// Compiling XSD / RelaxNG / DTD with libxml2-wasm. Compiled schemas live in wasm memory: they are
// cached per worker (bounded, least recently used is disposed) and shared by every run of the
// same config. Includes and imports are refused at save time: nothing is loaded from outside.
import type { XmlDocument } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";

export type SchemaType = "xsd" | "relaxng" | "dtd";

export interface CompiledSchema {
  validate(doc: XmlDocument): void;
  dispose(): void;
}

export class SchemaCompileError extends Error {}

/** References to other documents, which we never load (no file system, no network). */
const EXTERNAL: Record<SchemaType, RegExp> = {
  xsd: /<(?:[\w.-]+:)?(include|import|redefine|override)\b[^>]*\bschemaLocation\s*=\s*["']([^"']*)/,
  relaxng: /<(?:[\w.-]+:)?(externalRef|include)\b[^>]*\bhref\s*=\s*["']([^"']*)/,
  dtd: /<!ENTITY\s+%\s*[\w.:-]+\s+(SYSTEM|PUBLIC)\s+["']([^"']*)/,
};

export function externalReference(type: SchemaType, schema: string): string | null {
  const m = EXTERNAL[type].exec(schema);
  return m ? `${m[1]} of "${m[2]}"` : null;
}

function describe(e: unknown): string {
  if (e instanceof libxml().XmlLibError && e.details.length > 0) {
    return e.details
      .filter((d) => d.level >= 2)
      .slice(0, 5)
      .map((d) => `${d.line > 0 ? `line ${d.line}: ` : ""}${d.message.trim()}`)
      .join("; ");
  }
  return e instanceof Error ? e.message : String(e);
}

/** Compiles a schema; throws SchemaCompileError with a readable message. Caller disposes. */
export function compileSchema(type: SchemaType, schema: string): CompiledSchema {
  const { DtdValidator, RelaxNGValidator, XmlDocument, XmlDtd, XsdValidator } = libxml();
  try {
    if (type === "dtd") {
      const v = new DtdValidator(XmlDtd.fromString(schema));
      return { validate: (doc) => v.validate(doc), dispose: () => v.dispose() };
    }
    const schemaDoc = XmlDocument.fromString(schema, { option: xmlParseOptions() });
    try {
      const v = type === "xsd" ? XsdValidator.fromDoc(schemaDoc) : RelaxNGValidator.fromDoc(schemaDoc);
      // The schema document lives as long as the validator: XSD components may point into it.
      return {
        validate: (doc) => v.validate(doc),
        dispose: () => {
          v.dispose();
          schemaDoc.dispose();
        },
      };
    } catch (e) {
      schemaDoc.dispose();
      throw e;
    }
  } catch (e) {
    throw new SchemaCompileError(describe(e));
  }
}

const CACHE_SIZE = 16;
const cache = new Map<string, CompiledSchema>();

/** The cached compiled schema for a config, compiling (and evicting the oldest) on a miss. */
export function cachedSchema(type: SchemaType, schema: string): CompiledSchema {
  const key = `${type}\u0000${schema}`;
  let hit = cache.get(key);
  if (hit) {
    cache.delete(key); // re-insert: Map order is our LRU order
  } else {
    hit = compileSchema(type, schema);
    if (cache.size >= CACHE_SIZE) {
      const [oldKey, old] = cache.entries().next().value as [string, CompiledSchema];
      cache.delete(oldKey);
      old.dispose();
    }
  }
  cache.set(key, hit);
  return hit;
}
