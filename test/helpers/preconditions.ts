// The answers a false or malformed If-Match / If-None-Match gets on a resource without an entity
// tag (src/http/preconditions.ts; docs/api.md), as whole error objects.
import { errorBody } from "./server.ts";

/** If-Match names a tag, and the resource has none. */
export const NO_TAG = errorBody(
  412,
  "precondition_failed",
  "If-Match names an entity tag, but this resource has none (only a workflow, a run's content and a run's report have one): nothing was changed.",
);

/** If-None-Match: * on an unsafe request to a resource that exists. */
export const EXISTS = errorBody(
  412,
  "precondition_failed",
  "If-None-Match is * and the resource exists: nothing was changed.",
);

/** A header that is neither `*` nor a list of quoted entity tags. */
export const malformed = (name: string) =>
  errorBody(400, "invalid_request", `Invalid value for ${name}.`, [
    {
      field: name,
      code: "invalid",
      message: `${name} is * or a list of entity tags in double quotes, such as "7".`,
    },
  ]);
