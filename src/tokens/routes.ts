// The caller's own API tokens. The secret is in the create response and nowhere else, ever.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { type Problem, fieldProblem, invalidBecause, notFound } from "../errors.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { documentedWith, named } from "../http/openapi/named.ts";
import { AUTHED, BOUNDS, errorResponses, Int } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import type { TokenRecord } from "./store.ts";
import { charCount, NAME_CHARACTERS, nameCharactersOk } from "../lib/text.ts";

export const TokenOut = named(
  "Token",
  t.Object({
    id: Int(),
    name: t.String(),
    prefix: t.String(),
    created_at: t.String(),
    last_used_at: t.Nullable(t.String()),
    expires_at: t.Nullable(t.String()),
    revoked_at: t.Nullable(t.String()),
  }),
);
export const presentToken = (r: TokenRecord) => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
  expires_at: r.expires_at,
  revoked_at: r.revoked_at,
});

export function tokenNameProblem(name: string): Problem | null {
  if (!name.trim() || charCount(name) > 100)
    return invalidBecause("A token name of 1 to 100 characters is required.");
  return nameCharactersOk(name) ? null : invalidBecause(`A token name ${NAME_CHARACTERS}.`);
}
export function checkTokenName(name: string) {
  const p = tokenNameProblem(name);
  if (p) throw fieldProblem("name", p);
}

export function tokenRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { tokens, tokenStore, config } = deps;
  const detail = { tags: ["Tokens"] };
  /** The caller's token with this id; another user's is as unknown as a missing one (404). */
  const ownToken = async (id: string, userId: number): Promise<TokenRecord> => {
    const rec = /^\d{1,15}$/.test(id) ? await tokenStore.get(Number(id)) : null;
    if (!rec || rec.user_id !== userId) throw notFound("Token");
    return rec;
  };
  return (
    new Elysia({ prefix: "/api/v1/users/me/tokens" })
      .use(auth)
      .get(
        "/",
        async ({ query, request, principal }) => {
          const p = parsePage(query);
          const { count, items } = await tokenStore.listForUser(principal.user.id, p.limit, p.offset);
          return envelope(
            publicUrl(config.base_url, request),
            p,
            count,
            items.map((r) => presentToken(tokens.withLastUse(r))),
          );
        },
        {
          auth: true,
          query: t.Object(PageQuery, { additionalProperties: true }),
          response: { 200: EnvelopeOf(TokenOut), ...errorResponses(...AUTHED) },
          detail: { ...detail, operationId: "listTokens", summary: "Your API tokens (never their secrets)" },
        },
      )
      .post(
        "/",
        async ({ body, principal, actor, set, request }) => {
          checkTokenName(body.name);
          const { record, token } = await tokens.create(
            principal.user.id,
            body.name,
            body.expires_in_days,
            actor,
          );
          set.status = 201;
          set.headers["cache-control"] = "no-store";
          set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/users/me/tokens/${record.id}/`;
          return { ...presentToken(record), token };
        },
        {
          auth: true,
          // A user at their most tokens: the 409 first (§13.2.1).
          preconditions: (c: { principal: Principal }) => tokens.roomFor(c.principal.user.id),
          body: t.Object(
            {
              name: documentedWith(
                t.String({ error: "must be a string" }),
                BOUNDS.tokenName,
                tokenNameProblem,
              ),
              expires_in_days: t.Optional(
                t.Nullable(Int({ minimum: 1, maximum: 36500 }), {
                  error: "must be an integer from 1 to 36500 or null",
                  description: "Days until the token expires; omitted or null: the instance default",
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            201: named(
              "NewToken",
              t.Composite([
                TokenOut,
                t.Object({ token: t.String({ description: "The secret: shown once" }) }),
              ]),
            ),
            // 409: the user holds the most active tokens allowed (docs/access.md).
            ...errorResponses(...AUTHED, 409),
          },
          detail: {
            ...detail,
            operationId: "createToken",
            summary: "Create a token; the response is the only time its value is shown",
          },
        },
      )
      // One token, as the list shows it: the create response's Location names it (it answered 405).
      .get(
        "/:id/",
        async ({ params, principal }) =>
          presentToken(tokens.withLastUse(await ownToken(params.id, principal.user.id))),
        {
          auth: true,
          preconditions: "read",
          params: t.Object({ id: t.String() }),
          response: { 200: TokenOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
          detail: {
            ...detail,
            operationId: "getToken",
            summary: "One of your API tokens (never its secret)",
          },
        },
      )
      .delete(
        "/:id/",
        async ({ params, principal, actor, set }) => {
          const rec = await ownToken(params.id, principal.user.id);
          await tokenStore.revoke(rec.id, actor);
          set.status = 204;
        },
        {
          auth: true,
          preconditions: async (c: { params: { id: string }; principal: Principal }) =>
            ownToken(c.params.id, c.principal.user.id),
          params: t.Object({ id: t.String() }),
          response: { 204: t.Void(), ...errorResponses(...AUTHED) },
          detail: {
            ...detail,
            operationId: "revokeToken",
            summary: "Revoke a token (effective on the next request)",
          },
        },
      )
  );
}
