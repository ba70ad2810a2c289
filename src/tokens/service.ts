// Token lifecycle and verification. A verified token (its row, user and the policies) is kept in
// an exact cache (src/db/generation.ts): revocation, user deletion and a policy change — made
// here or by the CLI in another process — act on the very next request. Expiry and the
// policies are evaluated against the clock on every request, cached or not.
import type { Actor } from "../audit/types.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { ReferenceGone } from "../db/program.ts";
import { conflict, invalid, notFound, unauthenticated } from "../errors.ts";
import type { SettingsService } from "../settings/service.ts";
import type { InstanceSettings } from "../settings/store.ts";
import type { User, UserStore } from "../users/store.ts";
import { digestKey, digestOf, lookupPrefix, newToken, sameDigest } from "./secret.ts";
import type { TokenRecord, TokenStore } from "./store.ts";

const DAY_MS = 86_400_000;
const FLUSH_MS = 30_000;
/** Responses of a token this close to its rotation deadline carry a warning. */
export const ROTATION_WARNING_DAYS = 7;
/** Unrevoked tokens one user may hold: a leaked script minting tokens in a loop hits a wall. */
export const MAX_ACTIVE_TOKENS = 100;

/** Cached verifications, each under two keys: the digest (verify) and the token id (recheck). */
const VERIFIED_CACHE_SIZE = 2048;

/** What a token's checks depend on, besides the clock; frozen, shared between requests. */
interface Verified {
  token: TokenRecord;
  user: User;
  policy: InstanceSettings;
}

export interface VerifiedToken {
  user: User;
  token: TokenRecord;
  /** Set in the token's last days before required rotation. */
  warning: string | null;
  /** The cache generation the checks ran at (src/db/generation.ts). */
  generation: number;
}

const tooMany = () =>
  conflict(`A user may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke unused ones first.`);

/** The creation time a token must be newer than to be usable under the policy (checkUsable); null: any. */
function oldestUsable(policy: InstanceSettings, nowMs: number): string | null {
  const days = [policy.token_max_ttl_days, policy.token_rotation_days].filter((d) => d != null);
  return days.length ? new Date(nowMs - Math.min(...days) * DAY_MS).toISOString() : null;
}

/**
 * Throws 401 unless the token may be used now; returns the rotation warning, if any. The
 * Warning header (RFC 7234 §5.5, code 299 "miscellaneous persistent warning") names the date.
 */
export function checkUsable(t: TokenRecord, policy: InstanceSettings, nowMs: number): string | null {
  if (t.revoked_at) throw unauthenticated("The token has been revoked.");
  if (t.expires_at && Date.parse(t.expires_at) <= nowMs) throw unauthenticated("The token has expired.");
  const created = Date.parse(t.created_at);
  if (policy.token_max_ttl_days != null && nowMs - created >= policy.token_max_ttl_days * DAY_MS)
    throw unauthenticated("The token is older than the instance's maximum token lifetime.");
  if (policy.token_rotation_days == null) return null;
  const deadline = created + policy.token_rotation_days * DAY_MS;
  if (nowMs >= deadline)
    throw unauthenticated("The token must be rotated: create a new one and revoke this one.");
  if (deadline - nowMs > ROTATION_WARNING_DAYS * DAY_MS) return null;
  return `299 assay "This token must be rotated before ${new Date(deadline).toISOString()}"`;
}

export function createTokenService(tokens: TokenStore, users: UserStore, settings: SettingsService) {
  // last_used_at: remembered in memory per request, written in one batch every FLUSH_MS (and at
  // shutdown), so authentication never writes to the database. Kept as epoch ms: the ISO text is
  // made when written or shown, not on every request.
  const lastUse = new Map<number, number>();
  const iso = (ms: number) => new Date(ms).toISOString();
  let flushing: Promise<void> | null = null;
  const flush = async (): Promise<void> => {
    // One write at a time. A caller that comes while one is under way (close() during the
    // timer's, say) waits for it, then writes what was used since: returning at once left those
    // uses unwritten at shutdown, and closed the database under the write.
    while (flushing) await flushing.catch(() => {});
    if (!lastUse.size) return;
    const batch = new Map<number, string>();
    for (const [id, ms] of lastUse) batch.set(id, iso(ms));
    lastUse.clear();
    flushing = tokens.touch(batch).finally(() => {
      flushing = null;
    });
    await flushing;
  };
  const timer = setInterval(() => void flush().catch(() => {}), FLUSH_MS);
  timer.unref?.();

  const verified = new GenerationCache<string | number, Verified>(tokens.db, VERIFIED_CACHE_SIZE);
  // The generation, without an await on SQLite (a number) — the hot path of every request.
  const generation = (): number | Promise<number> => verified.sync();
  const remember = (gen: number, key: string | null, v: Verified): Verified => {
    deepFreeze(v);
    if (key !== null) verified.put(gen, key, v);
    verified.put(gen, v.token.id, v);
    return v;
  };

  return {
    /** Creates a token; returns the record and the secret, which is never retrievable again. */
    async create(userId: number, name: string, expiresInDays: number | null | undefined, actor: Actor) {
      const policy = await settings.get();
      const max = policy.token_max_ttl_days;
      if (expiresInDays != null && max != null && expiresInDays > max) {
        throw invalid("The requested lifetime exceeds the instance's maximum token lifetime.", [
          { field: "expires_in_days", code: "max_ttl", message: `At most ${max} days are allowed.` },
        ]);
      }
      // Without an explicit lifetime: the default, never longer than the maximum.
      let days = expiresInDays ?? policy.token_default_ttl_days;
      if (max != null) days = Math.min(days ?? max, max);
      const expires_at = days == null ? null : new Date(Date.now() + days * DAY_MS).toISOString();
      const secret = newToken();
      // Tokens past the rotation deadline or the maximum lifetime work no more: not counted.
      const record = await tokens
        .create({ user_id: userId, name, prefix: secret.prefix, digest: secret.digest, expires_at }, actor, {
          max: MAX_ACTIVE_TOKENS,
          bornAfter: oldestUsable(policy, Date.now()),
        })
        .catch((e) => {
          // The user deleted since the request was authenticated (another request or node).
          throw e instanceof ReferenceGone ? notFound("User") : e;
        });
      if (!record) throw tooMany();
      return { record, token: secret.token };
    },
    /**
     * 409 when the user holds their most active tokens: the answer a new token's request gets
     * whatever its content, so also before a false If-Match / If-None-Match (RFC 9110 §13.2.1).
     */
    async roomFor(userId: number): Promise<void> {
      const policy = await settings.get();
      if ((await tokens.countActive(userId, oldestUsable(policy, Date.now()))) >= MAX_ACTIVE_TOKENS)
        throw tooMany();
    },

    /** Verifies a bearer token; throws 401 authentication_required on any failure. */
    async verify(presented: string): Promise<VerifiedToken> {
      const prefix = lookupPrefix(presented);
      if (!prefix) throw unauthenticated("Invalid token.");
      const key = digestKey(presented);
      const g = generation();
      const gen = typeof g === "number" ? g : await g;
      let v = verified.peek(key);
      const nowMs = Date.now();
      let warning: string | null;
      if (v) warning = checkUsable(v.token, v.policy, nowMs);
      else {
        // Miss: the constant-time compare against the stored digest; only successes are cached,
        // so random tokens cannot grow the cache.
        const digest = digestOf(presented);
        const match = (await tokens.findByPrefix(prefix)).find((t) => sameDigest(t.digest, digest));
        if (!match) throw unauthenticated("Invalid token.");
        const policy = await settings.get();
        warning = checkUsable(match, policy, nowMs);
        // A deleted user's tokens are deleted with them (ON DELETE CASCADE); this covers a race.
        const user = await users.get(match.user_id);
        if (!user) throw unauthenticated("Invalid token.");
        const { digest: _d, ...token } = match;
        v = remember(gen, key, { token, user, policy });
      }
      lastUse.set(v.token.id, nowMs);
      // The cached record as is (frozen; no copy per request): its last_used_at is the stored one,
      // this use is in lastUse (withLastUse merges it wherever the time is shown).
      return { user: v.user, token: v.token, warning, generation: gen };
    },

    /**
     * Re-checks a token already verified earlier in this request (after a long wait): one
     * generation read when nothing changed.
     */
    async recheck(tokenId: number): Promise<void> {
      const g = generation();
      const gen = typeof g === "number" ? g : await g;
      const v = verified.peek(tokenId);
      if (v) {
        checkUsable(v.token, v.policy, Date.now());
        return;
      }
      const t = await tokens.get(tokenId);
      if (!t) throw unauthenticated("Invalid token.");
      const policy = await settings.get();
      checkUsable(t, policy, Date.now());
      const user = await users.get(t.user_id);
      if (!user) throw unauthenticated("Invalid token.");
      remember(gen, null, { token: t, user, policy });
    },

    /** Entries in the verified-token cache (each token counts twice: digest and id). */
    cacheSize: (): number => verified.size,
    /** Last-use times not yet flushed, merged into a listing (the later one: another node's). */
    withLastUse(t: TokenRecord): TokenRecord {
      const ms = lastUse.get(t.id);
      const mine = ms === undefined ? null : iso(ms);
      return {
        ...t,
        last_used_at: mine !== null && !(t.last_used_at && t.last_used_at > mine) ? mine : t.last_used_at,
      };
    },
    flush,
    close: async () => {
      clearInterval(timer);
      await flush();
    },
  };
}
export type TokenService = ReturnType<typeof createTokenService>;
