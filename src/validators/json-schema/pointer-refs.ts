// References to a JSON Pointer of a document named by URI, given to the engine under their text
// (resources.ts, engineView): typebox's own search could answer them from the wrong document.
import { isPlainObject } from "../shared/config-shape.ts";
import { schemaAt, type WrittenRef, writtenRefs } from "./refs.ts";

/** A schema and its context, as the engine gets them. */
export type View = { schema: unknown; context: Record<string, unknown> };

/**
 * Each `$ref` to a JSON Pointer of a document named by URI (`other.json#/$defs/a`, `sub/#/$defs/a`)
 * given to the engine under its text, as the exact schema it names. typebox looks the text up in
 * its context first; otherwise it tries the pointer from every subschema on its way, the
 * referring schema's own first, whatever document the reference names: with the step's own
 * `#/$defs/a` a string and the stored other.json's an integer, `{"x": 1}` failed and
 * `{"x": "s"}` passed. The text is kept where it can be (the engine then goes on exactly as if its
 * search had found the place); a text two references use for two places (relative, in two
 * documents) is made absolute, on copies, where the engine knows the document it names by that
 * URI, and left to its search elsewhere. Nothing is added when no reference names a pointer of a
 * document by URI: a bare `#/…` is searched from the root of its own resource, which holds it.
 */
export function pinPointerRefs(
  view: View,
  schema: unknown,
  reached: Record<string, unknown>,
  naming: ReadonlySet<string>,
  rootUri: string,
): View {
  let docs = engineDocs(view, reached, naming, rootUri);
  let written = docs.map((d) => writtenRefs(d.doc, d.uri));
  if (!written.some((refs) => refs.some((w) => w.pointer))) return view;
  let meaning = meanings(written);
  const context = { ...view.context };
  let own = view.schema;
  const known = (doc: string) => isPlainObject(context[doc]) || isPlainObject(context[`${doc}#`]);
  const twoPlaces = (w: WrittenRef) =>
    w.pointer !== undefined && meaning.get(w.text) === null && known(w.pointer.doc);
  let rewritten = false;
  docs.forEach((d, i) => {
    if (!written[i]!.some(twoPlaces)) return;
    let doc = d.doc;
    // What rebasedView did not copy is the caller's (stored schemas are cached per step config).
    const original = d.key === undefined ? doc === schema : doc === reached[d.key];
    if (original) {
      doc = structuredClone(doc);
      if (d.key === undefined) own = doc;
      else for (const k of [d.uri, `${d.uri}#`]) if (context[k] === d.doc) context[k] = doc;
    }
    for (const w of writtenRefs(doc, d.uri)) if (twoPlaces(w)) w.owner[w.key] = w.href;
    rewritten = true;
  });
  if (rewritten) {
    docs = engineDocs({ schema: own, context }, reached, naming, rootUri);
    written = docs.map((d) => writtenRefs(d.doc, d.uri));
    meaning = meanings(written);
  }
  for (const { text, pointer } of written.flat()) {
    if (!pointer || meaning.get(text) === null || Object.hasOwn(context, text)) continue;
    const node = pointer.local ?? schemaAt(context[pointer.doc] ?? context[`${pointer.doc}#`], pointer.hash);
    if (node !== undefined) context[text] = node;
  }
  return { schema: own, context };
}

/**
 * The documents the engine reads that may hold a text to name, as it reads them: the schema, each
 * stored schema naming a pointer by URI, and rebasedView's copies (whose references it rewrote).
 * Any other holds no such text, so no reference there can use a text given to the engine.
 */
function engineDocs(
  view: View,
  reached: Record<string, unknown>,
  naming: ReadonlySet<string>,
  rootUri: string,
) {
  const docs: Array<{ uri: string; doc: unknown; key?: string }> = [{ uri: rootUri, doc: view.schema }];
  const seen = new Set<unknown>([view.schema]);
  for (const key of Object.keys(reached)) {
    const doc = view.context[key];
    if (!isPlainObject(doc) || seen.has(doc) || (!naming.has(key) && doc === reached[key])) continue;
    seen.add(doc);
    docs.push({ uri: key.replace(/#$/, ""), doc, key });
  }
  return docs;
}

/** What each reference text means: its absolute URI, or null when two references differ. */
function meanings(written: WrittenRef[][]): Map<string, string | null> {
  const meaning = new Map<string, string | null>();
  for (const { text, href } of written.flat()) {
    const m = meaning.get(text);
    meaning.set(text, m === undefined || m === href ? href : null);
  }
  return meaning;
}
