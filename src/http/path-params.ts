// A path segment that is not percent-encoded UTF-8 (`%FF`, `%ED%A0%80`: a lone surrogate) names
// nothing. Elysia decodes path parameters with fast-decode-uri-component, which gives null for
// such a segment; a route with a params schema then answered the framework's 400 ("Expected
// property 'workflow' to be string but found: null"), the others looked the null up. Such a
// request is answered as one no route matches (src/http/errors.ts): 404 not_found, or 405 when
// the path takes other methods, with the token authenticated if one is sent.
import { Elysia, NotFoundError } from "elysia";

export const pathParams = new Elysia({ name: "path-params" }).onTransform({ as: "global" }, ({ params }) => {
  for (const v of Object.values(params ?? {})) if (v === null) throw new NotFoundError();
});
