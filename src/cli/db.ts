// `assay migrate` and `assay db copy`: schema upgrades without starting the server, and moving an
// installation between SQLite (a data dir) and PostgreSQL (a URL).
import { ConfigError, loadConfig } from "../config.ts";
import { CopyMismatch, copyInstallation } from "../db/copy.ts";
import { holdOffServers } from "../db/lock.ts";
import { LATEST, READS, schemaVersion } from "../db/migrate.ts";
import { type AnyDb, describeDb, openDb } from "../db/open.ts";
import { serversHolding } from "../db/serving-lock.ts";
import { parseDatabaseUrl } from "../db/url.ts";
import { databaseUrlProblems, severalHostsProblem } from "../db/url-query.ts";
import { AppError } from "../errors.ts";
import { maskUrlText } from "../lib/mask-url.ts";
import { type Parsed, UsageError, allowOnly, unknownSubcommand } from "./args.ts";
import { print, refuseUpgradeUnderServer, requireInstallation, table } from "./context.ts";

/** `assay migrate [--data-dir DIR | --database-url URL]`: brings the schema up to this build's. */
export async function migrate(p: Parsed) {
  allowOnly(p, ["data_dir"]);
  if (p.positionals.length)
    throw new UsageError("usage: assay migrate [--data-dir DIR | --database-url URL]");
  const config = loadConfig(process.env, pick(p.flags, ["data_dir", "database_url"]));
  const before = await peekVersion(config);
  const release = refuseUpgradeUnderServer(config);
  try {
    await (await openDb(config)).close();
  } finally {
    release();
  }
  print(
    before === LATEST
      ? `${describeDb(config)}: schema ${LATEST}, up to date.`
      : `${describeDb(config)}: schema ${before} → ${LATEST}.`,
  );
}

/** `assay db copy --from DIR|URL --to DIR|URL [--replace]`. */
export async function db(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  const usage = "usage: assay db copy --from DIR|URL --to DIR|URL [--replace]";
  if (sub !== "copy") throw unknownSubcommand(sub, ["copy"], usage);
  if (rest.length) throw new UsageError(usage);
  allowOnly(p, ["from", "to", "replace"]);
  const { from, to } = p.flags;
  if (!from || !to) throw new UsageError("usage: assay db copy --from DIR|URL --to DIR|URL [--replace]");
  if (from === to) throw new UsageError("--from and --to name the same database");
  // `mysql://…`, `postgre://…`, `POSTGRES://…` were taken for a data dir's path: a copy "to" a
  // mistyped URL made a local directory `mysql:/…` and exited 0.
  for (const [flag, v] of [
    ["--from", from],
    ["--to", to],
  ] as const)
    if (!isUrl(v) && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v))
      throw new UsageError(
        `${flag} "${maskUrlText(v)}" is a URL but not postgres://…: give a postgres:// URL or a data dir`,
      );
  // What serve and migrate check in loadConfig, which a copy's URLs do not pass through: unchecked,
  // connect_timeout=abc reached the client as NaN, and no host waited for localhost over TCP.
  const problems = [
    ["--from", from],
    ["--to", to],
  ].flatMap(([flag, v]) => {
    const several = isUrl(v!) ? severalHostsProblem(v!) : null;
    if (several) return [`${flag}: ${several}`];
    const parsed = isUrl(v!) ? parseDatabaseUrl(v!) : null;
    return parsed ? databaseUrlProblems(parsed).map((p) => `${flag}: ${p}`) : [];
  });
  if (problems.length) throw new ConfigError(problems);
  // The source must be an installation: a mistyped one would be created empty, and with
  // --replace its nothing would replace the target's rows.
  await requireInstallation(where(from));
  // The target's rows are written (replaced, with --replace) under nothing else: a server running
  // on it would go on with caches and tokens of a database that changed under it. Held off for
  // the whole copy.
  const target = where(to);
  const hold = target.database_url ? null : holdOffServers(target.data_dir);
  if (hold && "running" in hold)
    throw serverOnTarget(
      `A server${hold.running.pid ? ` (PID ${hold.running.pid})` : ""} is running on ${to}`,
    );
  try {
    await copyInto(p, from, to);
  } finally {
    if (hold && "release" in hold) hold.release();
  }
}

const serverOnTarget = (what: string) =>
  new AppError(409, "conflict", `${what}: stop it before copying into it. Nothing copied.`);

async function copyInto(p: Parsed, from: string, to: string) {
  const releaseFrom = refuseUpgradeUnderServer(where(from));
  let releaseTo = () => {};
  let src: AnyDb;
  try {
    releaseTo = refuseUpgradeUnderServer(where(to));
    // The source is only read: a role with SELECT alone on its tables may be the one copied from.
    src = await openDb(where(from), { privileges: READS });
  } catch (e) {
    releaseFrom();
    releaseTo();
    throw e;
  }
  releaseFrom();
  let dst: AnyDb | null = null;
  try {
    try {
      dst = await openDb(where(to));
    } finally {
      releaseTo();
    }
    if (dst.dialect === "postgres") {
      const n = await serversHolding(dst.sql);
      if (n)
        throw serverOnTarget(
          `${n === 1 ? "A server is" : `${n} servers are`} running on ${describeDb(where(to))}`,
        );
    }
    const outcome = await copyInstallation(src, dst, { replace: p.bools.has("replace"), log: print });
    if (outcome.state === "refused")
      throw new AppError(409, "conflict", `Nothing copied: ${outcome.reason}.`);
    print(
      outcome.state === "unchanged"
        ? "The target already holds exactly these rows: nothing to do."
        : `Copied and verified (${describeDb(where(from))} → ${describeDb(where(to))}):`,
    );
    table(
      outcome.tables.map((t) => ({ table: t.table, rows: t.rows, sha256: t.sha256 })),
      ["table", "rows", "sha256"],
    );
  } catch (e) {
    if (e instanceof CopyMismatch)
      throw new AppError(500, "internal_error", `Verification failed: ${e.message}`);
    throw e;
  } finally {
    await src.close();
    await dst?.close();
  }
}

const isUrl = (s: string) => /^postgres(ql)?:\/\//.test(s);
const where = (s: string) => ({ data_dir: isUrl(s) ? "./assay-data" : s, database_url: isUrl(s) ? s : null });

function pick(flags: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.filter((k) => flags[k] !== undefined).map((k) => [k, flags[k]!]));
}

async function peekVersion(c: { data_dir: string; database_url: string | null }): Promise<number> {
  const db = await openDb(c, { migrate: false }).catch(() => null);
  if (!db) return 0;
  try {
    return await schemaVersion(db);
  } finally {
    await db.close();
  }
}
