// The stored-schema documents a step config pins (json_schema `resources`, XSD `documents`:
// src/validators/registry.ts pinStepConfig), kept apart from the config (migration 21). A config
// is stored once by digest (config-store.ts), but the digest covers the pinned documents too: a
// config whose author changed one `description` was stored again with every 900 KB document it
// pins. Now each document is stored once in pinned_documents by the SHA-256 of its JSON text, and
// the stored config holds that digest in its place, so a new config costs only its own bytes.
//
// The rule is by shape, not by validator, so that the migration (which sees configs without their
// steps) and a save split alike: every member of a top-level `resources` or `documents` that is a
// JSON object. Lossless whatever the validator: joining puts each value back under its key, in
// its place (a CSV step's `resources` is an array and stays in the config).
import { sha256 } from "../audit/chain.ts";

const PINNED_KEYS: ReadonlySet<string> = new Set(["resources", "documents"]);

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A config (as stored: a JSON object) split into the config that names its pinned documents by
 * digest, and those documents' JSON texts by digest. Built with entries, never by assignment: a
 * key `__proto__` (JSON.parse makes it an own key) stays a key.
 */
export function splitPinned(config: Json): { config: Json; documents: Map<string, string> } {
  const documents = new Map<string, string>();
  const out = Object.fromEntries(
    Object.entries(config).map(([key, value]) => {
      if (!PINNED_KEYS.has(key) || !isObject(value)) return [key, value];
      const named = Object.entries(value).map(([uri, doc]) => {
        const text = JSON.stringify(doc);
        const digest = sha256(text);
        documents.set(digest, text);
        return [uri, digest];
      });
      return [key, Object.fromEntries(named)];
    }),
  );
  return { config: out, documents };
}

/** The digests a split config names. */
export function pinnedDigests(config: Json): string[] {
  const out: string[] = [];
  for (const key of PINNED_KEYS) {
    const v = config[key];
    if (isObject(v)) for (const d of Object.values(v)) if (typeof d === "string") out.push(d);
  }
  return out;
}

/** The config whole again: each digest replaced by its document (`found`, parsed). */
export function joinPinned(config: Json, found: ReadonlyMap<string, unknown>, what: string): Json {
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => {
      if (!PINNED_KEYS.has(key) || !isObject(value)) return [key, value];
      const docs = Object.entries(value).map(([uri, digest]) => {
        // A foreign key cannot reach inside the JSON; a config naming a missing document is damage.
        if (typeof digest !== "string" || !found.has(digest))
          throw new Error(`pinned document ${String(digest)} of ${what} is missing`);
        return [uri, found.get(digest)];
      });
      return [key, Object.fromEntries(docs)];
    }),
  );
}
