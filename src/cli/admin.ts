// Headless administration on the data dir: init, users, orgs, members, tokens, settings.
import { cliActor } from "../audit/actor.ts";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describeDb } from "../db/open.ts";
import { AppError, invalid } from "../errors.ts";
import { FIRST_RUN_INVALID, inputProblems } from "../setup/service.ts";
import { checkRole, createOrgService, refuseDeletedOrg } from "../orgs/service.ts";
import { ROLES } from "../orgs/store.ts";
import { DEFAULT_SETTINGS } from "../settings/store.ts";
import { checkTokenName } from "../tokens/routes.ts";
import { hashPassword } from "../users/password-hash.ts";
import { checkPassword, createUser } from "../users/service.ts";
import { deleteOtherSessions } from "../web/store.ts";
import { type Parsed, UsageError, allowOnly, meant, readPasswordStdin, unknownSubcommand } from "./args.ts";
import { configOf, parseDuration, print, readsOnly, table, withDeps } from "./context.ts";

const need = (p: Parsed, n: number, usage: string) => {
  if (p.positionals.length !== n) throw new UsageError(`usage: assay ${usage}`);
  return p.positionals;
};
const fail = (msg: string) => {
  throw new AppError(400, "invalid_request", msg);
};
/** How a deleted org is brought back, for the refusals of changes to one. */
const restoreHint = (slug: string) => `\`assay orgs restore ${slug}\``;
/** Changes made by these commands are logged as the CLI, with the account that ran it. */
const cli = cliActor();

export async function init(p: Parsed) {
  allowOnly(p, ["org", "org_name", "admin", "password_stdin", "data_dir"]);
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  if (!p.flags.org || !p.flags.admin) throw new UsageError("--org SLUG and --admin USERNAME are required");
  const input = {
    org_slug: p.flags.org,
    org_name: p.flags.org_name,
    username: p.flags.admin,
    password: p.bools.has("password_stdin") ? await readPasswordStdin() : null,
  };
  // What can be checked without a database is checked before the data dir is created: a failed
  // init leaves nothing behind, not even an empty database.
  const wrong = inputProblems(input, false);
  if (wrong.length) throw invalid(FIRST_RUN_INVALID, wrong);
  const config = configOf(p);
  // On SQLite the data dir is ours to clean up after a failure; PostgreSQL rolls back by itself.
  const dir = config.database_url ? null : config.data_dir;
  if (dir !== null && existsSync(dir) && !statSync(dir).isDirectory())
    throw new Error(`the data directory ${dir} is a file, not a directory`);
  const existed = dir !== null && existsSync(dir);
  const fresh = dir !== null && (!existed || readdirSync(dir).length === 0);
  try {
    await withDeps(
      p,
      async (d) => {
        if (!(await d.setup.needed()))
          fail(
            `${describeDb(d.config)} is already initialised; use \`assay users\`, \`orgs\` and \`tokens\`.`,
          );
        const r = await d.setup.run(input, { withToken: true, passwordRequired: false }, cli);
        print(
          `Initialised ${describeDb(d.config)}: instance admin "${input.username}", organization "${input.org_slug}" (admin).`,
        );
        print("API token (shown once, store it now):");
        print(r.token!);
      },
      { create: true },
    );
  } catch (e) {
    // Only what this command created is removed: the dir it made, or the files it wrote into an
    // empty one (never an operator's files).
    // A cleanup that fails (a file further up the path: rm says ENOTDIR) never hides why init failed.
    try {
      if (dir && fresh) {
        if (!existed) rmSync(dir, { recursive: true, force: true });
        else for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
      }
    } catch {}
    throw e;
  }
}

export async function users(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  const q = { ...p, positionals: rest };
  await withDeps(readsOnly(p, sub === "list"), async (d) => {
    if (sub === "create") {
      allowOnly(p, ["admin", "password_stdin", "name", "email", "data_dir"]);
      const [username] = need(
        q,
        1,
        "users create USERNAME [--admin] [--password-stdin] [--name N] [--email E]",
      );
      const password = p.bools.has("password_stdin") ? await readPasswordStdin() : null;
      const u = await createUser(
        d.users,
        {
          username: username!,
          password,
          name: p.flags.name,
          email: p.flags.email,
          is_admin: p.bools.has("admin"),
        },
        cli,
      );
      print(
        `Created user ${u.username} (id ${u.id})${u.is_admin ? ", instance admin" : ""} (${describeDb(d.config)}).`,
      );
    } else if (sub === "list") {
      allowOnly(p, ["data_dir"]);
      need(q, 0, "users list");
      table((await d.users.list(100000, 0)).items as unknown as Record<string, unknown>[], [
        "id",
        "username",
        "name",
        "email",
        "is_admin",
        "created_at",
      ]);
    } else if (sub === "delete") {
      allowOnly(p, ["data_dir"]);
      const [username] = need(q, 1, "users delete USERNAME");
      const u = await d.users.getByUsername(username!);
      if (!u) fail(`There is no user "${username}".`);
      const done = await d.users.delete(u!.id, cli);
      if (done === "last_admin")
        fail("The last instance administrator cannot be deleted; make another user admin first.");
      if (!done) fail(`There is no user "${username}".`);
      print(`Deleted user ${username} (${describeDb(d.config)}); their tokens no longer work.`);
    } else if (sub === "set-password") {
      allowOnly(p, ["password_stdin", "data_dir"]);
      const [username] = need(q, 1, "users set-password USERNAME --password-stdin");
      // The password only ever comes from stdin, and says so: never read from a terminal unasked.
      if (!p.bools.has("password_stdin")) throw new UsageError("users set-password needs --password-stdin");
      const u = await d.users.getByUsername(username!);
      if (!u) fail(`There is no user "${username}".`);
      const pw = await readPasswordStdin();
      checkPassword(pw, u!.username);
      // A reset is what an operator does for a compromised account: the user's web sessions end
      // with the old password (OWASP ASVS 3.3.3); API tokens are revoked on their own.
      await d.users.setPassword(u!.id, await hashPassword(pw), cli, "user.set_password", () =>
        deleteOtherSessions(u!.id, null),
      );
      print(`Password set for ${username} (${describeDb(d.config)}).`);
    } else
      throw unknownSubcommand(
        sub,
        ["create", "list", "delete", "set-password"],
        "usage: assay users create|list|delete|set-password …",
      );
  });
}

export async function orgs(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  const q = { ...p, positionals: rest };
  await withDeps(readsOnly(p, sub === "list"), async (d) => {
    if (sub === "create") {
      allowOnly(p, ["name", "data_dir"]);
      const [slug] = need(q, 1, "orgs create SLUG [--name N]");
      const o = await createOrgService(d.orgs, d.users).create(slug!, p.flags.name, cli);
      print(`Created organization ${o.slug} (${describeDb(d.config)}).`);
    } else if (sub === "list") {
      allowOnly(p, ["data_dir"]);
      need(q, 0, "orgs list");
      table(
        (await d.orgs.list({ includeDeleted: true, limit: 100000, offset: 0 })).items as unknown as Record<
          string,
          unknown
        >[],
        ["slug", "name", "status", "created_at", "deleted_at"],
      );
    } else if (sub === "suspend" || sub === "restore" || sub === "delete") {
      allowOnly(p, ["data_dir"]);
      const [slug] = need(q, 1, `orgs ${sub} SLUG`);
      const o = await d.orgs.getBySlug(slug!);
      if (!o) fail(`There is no organization "${slug}".`);
      // Restore is what a deleted org takes; delete again keeps it as it is (idempotent).
      if (sub === "suspend") refuseDeletedOrg(o!, restoreHint(slug!));
      const patch =
        sub === "suspend"
          ? { status: "suspended" as const }
          : sub === "restore"
            ? { status: "active" as const, deleted_at: null }
            : { deleted_at: o!.deleted_at ?? new Date().toISOString() };
      await d.orgs.update(
        o!.id,
        patch,
        cli,
        `org.${sub}`,
        sub === "suspend" ? (now) => refuseDeletedOrg(now, restoreHint(slug!)) : undefined,
      );
      print(
        sub === "delete"
          ? `Organization ${slug}: deleted (${describeDb(d.config)}). Its runs and history are kept and the slug stays reserved; \`assay orgs restore ${slug}\` brings it back.`
          : `Organization ${slug}: ${sub === "suspend" ? "suspended" : "restored"} (${describeDb(d.config)}).`,
      );
    } else
      throw unknownSubcommand(
        sub,
        ["create", "list", "suspend", "restore", "delete"],
        "usage: assay orgs create|list|suspend|restore|delete …",
      );
  });
}

export async function members(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  const q = { ...p, positionals: rest };
  await withDeps(readsOnly(p, sub === "list"), async (d) => {
    // Built when first used: a service touched before the arguments are checked reported a
    // missing installation (exit 1) for `members add ORG USER` without a role (exit 2).
    const svc = () => createOrgService(d.orgs, d.users);
    const org = async (slug: string) =>
      (await d.orgs.getBySlug(slug)) ?? fail(`There is no organization "${slug}".`);
    /**
     * An org given a member or a role: not a deleted one, which nobody can use until it is
     * restored. Removing a member only takes access away, and may be wanted before a restore.
     */
    const live = async (slug: string) => {
      const o = (await org(slug))!;
      refuseDeletedOrg(o, restoreHint(slug));
      return o;
    };
    allowOnly(p, ["data_dir"]);
    if (sub === "add") {
      const [slug, username, role] = need(q, 3, "members add ORG USERNAME ROLE");
      if (!(ROLES as readonly string[]).includes(role!))
        throw new UsageError(`ROLE is one of ${ROLES.join(", ")}, not "${role}"${meant(role!, ROLES)}`);
      const m = await svc().addMember((await live(slug!)).id, username!, checkRole(role!), cli);
      print(`${m.username} is now ${m.role} of ${slug} (${describeDb(d.config)}).`);
    } else if (sub === "set-role") {
      // An existing member's role: how an org whose last Admin was deleted gets one again.
      const [slug, username, role] = need(q, 3, "members set-role ORG USERNAME ROLE");
      if (!(ROLES as readonly string[]).includes(role!))
        throw new UsageError(`ROLE is one of ${ROLES.join(", ")}, not "${role}"${meant(role!, ROLES)}`);
      const m = await svc().setRole((await live(slug!)).id, username!, role!, cli);
      print(`${m.username} is now ${m.role} of ${slug} (${describeDb(d.config)}).`);
    } else if (sub === "remove") {
      const [slug, username] = need(q, 2, "members remove ORG USERNAME");
      await svc().removeMember((await org(slug!))!.id, username!, cli);
      print(`Removed ${username} from ${slug} (${describeDb(d.config)}).`);
    } else if (sub === "list") {
      const [slug] = need(q, 1, "members list ORG");
      table(
        (await d.orgs.members((await org(slug!))!.id, 100000, 0)).items as unknown as Record<
          string,
          unknown
        >[],
        ["username", "role", "created_at"],
      );
    } else
      throw unknownSubcommand(
        sub,
        ["add", "set-role", "remove", "list"],
        "usage: assay members add|set-role|remove|list …",
      );
  });
}

export async function tokens(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  const q = { ...p, positionals: rest };
  await withDeps(readsOnly(p, sub === "list"), async (d) => {
    if (sub === "create") {
      allowOnly(p, ["name", "expires_in", "data_dir"]);
      const [username] = need(q, 1, "tokens create USERNAME --name N [--expires-in 30d]");
      if (!p.flags.name) throw new UsageError("tokens create needs --name");
      checkTokenName(p.flags.name);
      const days = parseDuration(p.flags.expires_in);
      const u = await d.users.getByUsername(username!);
      if (!u) fail(`There is no user "${username}".`);
      const { record, token } = await d.tokens.create(u!.id, p.flags.name, days, cli);
      print(
        `Token ${record.id} "${record.name}" for ${username}${record.expires_at ? `, expires ${record.expires_at}` : ""} (${describeDb(d.config)}; shown once):`,
      );
      print(token);
    } else if (sub === "list") {
      allowOnly(p, ["data_dir"]);
      const [username] = need(q, 1, "tokens list USERNAME");
      const u = await d.users.getByUsername(username!);
      if (!u) fail(`There is no user "${username}".`);
      table(
        (await d.tokenStore.listForUser(u!.id, 100000, 0)).items as unknown as Record<string, unknown>[],
        ["id", "name", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at"],
      );
    } else if (sub === "revoke") {
      allowOnly(p, ["data_dir"]);
      const [id] = need(q, 1, "tokens revoke ID");
      // An id is a number, as `tokens list` shows it: anything else is a mistyped argument (exit
      // 2), not a token that is missing (exit 1). Past 15 digits no id exists (as in the API).
      if (!/^\d+$/.test(id!))
        throw new UsageError(
          `ID is a token's number, as \`assay tokens list USERNAME\` shows it, not "${id}"`,
        );
      const before = id!.length > 15 ? null : await d.tokenStore.get(Number(id));
      if (!before) fail(`There is no token ${id}.`);
      // Revoked again: nothing changes (the store writes no audit entry), and it is said so.
      await d.tokenStore.revoke(Number(id), cli);
      print(
        before!.revoked_at
          ? `Token ${id} was already revoked at ${before!.revoked_at} (${describeDb(d.config)}); nothing changed.`
          : `Token ${id} revoked (${describeDb(d.config)}).`,
      );
    } else
      throw unknownSubcommand(sub, ["create", "list", "revoke"], "usage: assay tokens create|list|revoke …");
  });
}

export async function settings(p: Parsed) {
  const [sub, ...rest] = p.positionals;
  allowOnly(p, ["data_dir"]);
  await withDeps(readsOnly(p, sub === "get" || sub === undefined), async (d) => {
    if (sub === "get" || sub === undefined) {
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
      for (const [k, v] of Object.entries(await d.settings.get())) print(`${k} = ${v ?? "null"}`);
    } else if (sub === "set") {
      const [key, value] = rest;
      // The keys are known without the database: a bad one is exit 2 even where there is none.
      const keys = Object.keys(DEFAULT_SETTINGS);
      if (!key || value === undefined || rest.length > 2 || !keys.includes(key))
        throw new UsageError(
          `usage: assay settings set KEY VALUE (KEY: ${keys.join(", ")}; VALUE: days or null)${key && !keys.includes(key) ? `\n"${key}" is no KEY${meant(key, keys)}` : ""}`,
        );
      const v =
        value === "null"
          ? null
          : /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= 36500
            ? Number(value)
            : (() => {
                throw new UsageError("VALUE must be a number of days (1..36500) or null");
              })();
      await d.settings.update({ [key]: v }, cli);
      print(`${key} = ${value} (${describeDb(d.config)})`);
    } else throw unknownSubcommand(sub, ["get", "set"], "usage: assay settings get | set KEY VALUE");
  });
}
