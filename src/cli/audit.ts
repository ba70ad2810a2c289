// `assay audit verify [--anchor SEQ:HASH]` and `assay audit head`: the audit log's hash chain
// checked, and its head printed for recording elsewhere (docs/audit.md).
import { createAuditStore } from "../audit/store.ts";
import { verifyChain } from "../audit/verify.ts";
import { type Parsed, UsageError, allowOnly, unknownSubcommand } from "./args.ts";
import { print, readsOnly, withDeps } from "./context.ts";
import { err } from "./out.ts";

/** Exit code: 0 intact, 1 broken (the first broken link is printed). */
export async function audit(p: Parsed): Promise<number> {
  const [sub, ...rest] = p.positionals;
  const usage = "usage: assay audit verify [--anchor SEQ:HASH] | head   [--data-dir DIR]";
  if (sub !== "verify" && sub !== "head") throw unknownSubcommand(sub, ["verify", "head"], usage);
  if (rest.length) throw new UsageError(usage);
  allowOnly(p, sub === "verify" ? ["anchor", "data_dir"] : ["data_dir"]);
  let anchor: { seq: number; hash: string } | undefined;
  if (p.flags.anchor !== undefined) {
    anchor = parseAnchor(p.flags.anchor);
    if (!anchor)
      throw new UsageError(
        '--anchor is SEQ:HASH or the JSON head `assay audit head` prints ({"seq", "hash", …})',
      );
  }
  return withDeps(readsOnly(p, true), async (d) => {
    if (sub === "head") {
      const head = await createAuditStore(d.db).head();
      // A failure, not a head: on stderr, so a script that records the head never records this.
      if (!head) {
        void err("assay audit: The audit log is empty.\n");
        return 1;
      }
      print(JSON.stringify(head));
      return 0;
    }
    const r = await verifyChain(d.db, anchor);
    if (r.broken) {
      print(`BROKEN at entry ${r.broken.seq}: ${r.broken.reason}.`);
      print(`${r.checked} entries before it are intact.`);
      return 1;
    }
    if (!r.head) {
      print("The audit log is empty: nothing to verify.");
      return 0;
    }
    print(
      `Intact: ${r.checked} entries (${r.first ?? "-"} to ${r.head.seq}) follow each other and match their hashes; head ${r.head.seq}:${r.head.hash}.`,
    );
    if (r.anchor === "matched") print(`The anchor ${anchor!.seq} is in the chain, unchanged.`);
    if (r.anchor === "purged")
      print(`The anchor ${anchor!.seq} is older than the retention kept: it could not be checked.`);
    return 0;
  });
}

const HASH = /^[0-9a-f]{64}$/;

/**
 * An anchor as recorded: SEQ:HASH, or the head as `assay audit head` and
 * `GET /api/v1/admin/audit/head/` print it (JSON with `seq` and `hash`), pasted as it is.
 */
function parseAnchor(text: string): { seq: number; hash: string } | undefined {
  const m = /^(\d{1,15}):([0-9a-f]{64})$/.exec(text);
  if (m) return { seq: Number(m[1]), hash: m[2]! };
  let head: unknown;
  try {
    head = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { seq, hash } = (head && typeof head === "object" ? head : {}) as { seq?: unknown; hash?: unknown };
  if (!Number.isSafeInteger(seq) || (seq as number) < 1 || typeof hash !== "string" || !HASH.test(hash))
    return undefined;
  return { seq: seq as number, hash };
}
