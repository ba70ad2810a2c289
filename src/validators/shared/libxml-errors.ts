// libxml2-wasm's error collector (its lib/libxml2.mjs) asks libxml2 for the node's path
// (xmlGetNodePath) on every error, and that walks the node's preceding siblings: a document of n
// invalid siblings cost O(n²) — 40,000 errors 3.7 s, 160,000 past a step's 60 s limit with no
// finding at all (an audit). A step shows at most `max_findings` of them; the rest are counted,
// not shown, and need no path. So the collector, the library's own otherwise, gives a path to the
// first `pathBudget` errors of a validation only (withErrorPaths). It replaces the library's once,
// when libxml2 loads (libxml.ts). Internal to the library, which is pinned (package.json); the
// test (test/unit/validators/xml-error-paths.test.ts) fails if those internals move.
import type { ErrorDetail, XmlNode } from "libxml2-wasm";
import type * as Internals from "libxml2-wasm/lib/libxml2.mjs";
import { MAX_MAX_FINDINGS } from "../limits.ts";

/** Paths given when no budget is set: twice the most findings a step may show (echoes dropped). */
export const MAX_ERROR_PATHS = 2 * MAX_MAX_FINDINGS;
let pathBudget = MAX_ERROR_PATHS;

/** Runs `fn` (a validation) with paths for its first `budget` errors only. */
export function withErrorPaths<T>(budget: number, fn: () => T): T {
  const before = pathBudget;
  pathBudget = Math.min(Math.max(0, budget), MAX_ERROR_PATHS);
  try {
    return fn();
  } finally {
    pathBudget = before;
  }
}

let getNodePath: ((node: number) => string | null) | null = null;

/**
 * libxml2's path of a node (xmlGetNodePath, the format of every other finding's path), for an
 * error libxml2 gave no node (a keyref's, src/validators/xml-schema/keyref-node.ts).
 */
export function nodePath(node: XmlNode): string | null {
  const ptr = (node as unknown as { _nodePtr?: number })._nodePtr;
  return getNodePath && ptr ? getNodePath(ptr) : null;
}

/** Installs the bounded collector in place of libxml2-wasm's own. */
export function boundErrorPaths(x: typeof Internals): void {
  const { error, xmlGetNodePath, XmlErrorStruct } = x;
  getNodePath = xmlGetNodePath as (node: number) => string | null;
  const addFunction = (x as unknown as { addFunction(f: (...a: number[]) => void, sig: string): number })
    .addFunction;
  error.errorCollector = addFunction((index: number, err: number) => {
    const list = error.storage.get(index);
    const detail: ErrorDetail = {
      message: XmlErrorStruct.message(err),
      level: XmlErrorStruct.level(err),
      line: XmlErrorStruct.line(err),
      col: XmlErrorStruct.col(err),
    };
    const file = XmlErrorStruct.file(err);
    if (file != null) detail.file = file;
    if (list.length < pathBudget) {
      const xpath = xmlGetNodePath(XmlErrorStruct.node(err));
      if (xpath != null) detail.xpath = xpath;
    }
    list.push(detail);
  }, "vii");
}
