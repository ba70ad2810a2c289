// A workflow's save-time check on a thread of its own (src/workflows/check-worker.ts), never on
// the HTTP thread. The check compiles every step's schema — libxml2 for XSD sets and RelaxNG, the
// JSON Schema engine, CEL, Schematron's XPath — and some took seconds or more, during which the
// HTTP thread answered nothing, /healthz included, for every tenant: five steps importing a
// stored 7.5 MB XSD, 6.4 s (and 10.8 s for a 19-byte PATCH of that workflow); a 64 KB JSON Schema
// whose $defs form a chain of 2,000 `$ref`s, 1.4 s; a 1.6 KB XSD or RelaxNG grammar whose groups
// each reference the one before twice, exponential in its depth (libxml2 expands every reference
// into the content model's automaton: 10 levels 2.4 s, 12 past a minute). A check that runs past
// `check_timeout_ms` is refused (400 too_complex, naming the step) and the thread replaced
// (src/lib/thread-calls.ts). The round trip costs little: a light JSON Schema draft took 402 µs
// checked there, 315 µs in place (500 each, measured on the 2-core machine of docs/benchmarks.md).
import { invalid, serviceUnavailable } from "../errors.ts";
import type { Logger } from "../lib/log.ts";
import { type ThreadAnswer, threadCalls } from "../lib/thread-calls.ts";
import { getValidator, prepareChecks, type StepConfigContext } from "../validators/registry.ts";
import {
  checkStoredSchema,
  checkStoredXsd,
  type XsdRoot,
  type XsdWanted,
  xsdWanted,
} from "../schemas/check.ts";
import { checkDraft, type SavedConfigs } from "./check.ts";
import { EMPTY_DRAFT, type WorkflowDraft } from "./types.ts";

/** `check_timeout_ms`'s default (src/config.ts). */
export const CHECK_TIMEOUT_MS = 10_000;

export interface ToChecker {
  id: number;
  draft: WorkflowDraft;
  /** A stored JSON Schema to check instead of the draft (an empty one): its 400, or nothing. */
  stored?: { schema: Record<string, unknown>; uri: string };
  /** A stored XSD document to check instead: its 400, or its targetNamespace (configs[0]). */
  storedXsd?: { text: string; uri: string };
  /** A round of the walk through stored XSDs instead: what `found` cannot answer (configs[0]). */
  xsdSet?: { roots: XsdRoot[]; found: Record<string, string> };
  resources?: StepConfigContext["resources"];
  xsdDocuments?: StepConfigContext["xsdDocuments"];
  /** The index of the step the request names: its problems are reported without `steps[i].`. */
  only: number | null;
  /** Each step's saved config (check.ts, SavedConfigs): a step left as saved is not compiled. */
  saved?: SavedConfigs;
}

/**
 * The walk through the org's stored XSDs that a draft's steps reach (src/schemas/service.ts,
 * storedXsdSet), given the function that runs one round of it: it parses each document found so
 * far, so on the thread, in the draft's turn, before its check. Its result is ctx.xsdDocuments.
 */
export type XsdSetWalk = (
  round: (roots: XsdRoot[], found: Record<string, string>) => Promise<XsdWanted>,
) => Promise<Record<string, string>>;

/** The check thread's answer (src/lib/thread-calls.ts): the steps' configs, stored schemas pinned. */
export type FromChecker = ThreadAnswer<{ configs: Record<string, unknown>[] }>;

/** checkDraft's field names: `steps[i]`, or "" for the step the request itself names. */
export const stepFieldOf = (only: number | null) => (i: number) => (i === only ? "" : `steps[${i}]`);

export interface DraftChecker {
  /**
   * Checks the draft (throws its 400) and writes the pinned step configs into it, as checkDraft.
   * `org`: whose draft it is; orgs take turns on the thread (one draft of each at a time).
   */
  check(
    d: WorkflowDraft,
    ctx: StepConfigContext,
    only: number | null,
    org?: number,
    xsdSet?: XsdSetWalk,
    saved?: SavedConfigs,
  ): Promise<void>;
  /** A stored JSON Schema's check (throws its 400), there too, with the org's schemas it references. */
  checkStored(
    schema: Record<string, unknown>,
    resources: Record<string, Record<string, unknown>>,
    uri: string,
    org?: number,
  ): Promise<void>;
  /** A stored XSD document's parse (throws its 400), there too: its targetNamespace. */
  checkStoredXsd(text: string, uri: string, org?: number): Promise<string>;
  /** Drafts on the thread now, and since the start. */
  readonly inFlight: number;
  readonly offloaded: number;
  close(): void;
}

export function createDraftChecker(
  opts: { workerUrl?: URL | string | null; timeoutMs?: number; log?: Logger } = {},
): DraftChecker {
  const timeoutMs = opts.timeoutMs ?? CHECK_TIMEOUT_MS;
  let offloaded = 0;
  const thread = opts.workerUrl
    ? threadCalls<Omit<ToChecker, "id">, { configs: Record<string, unknown>[] }, Record<string, unknown>[]>({
        url: opts.workerUrl,
        name: "workflow check thread",
        lostDetail: "The workflow could not be checked; retry.",
        read: (m) => m.configs,
        log: opts.log,
        deadline: { ms: timeoutMs, error: (m, step) => tooComplex(m, step, timeoutMs) },
      })
    : null;

  // One draft per org on the thread at a time, the others waiting in their org's line: the thread
  // takes its messages in order, so an org saving many slow drafts (each up to the time limit)
  // puts one ahead of another org's save, not all of them.
  const lines = new Map<number | undefined, (() => void)[]>();
  let closed = false;
  const turn = async (org: number | undefined): Promise<() => void> => {
    const line = lines.get(org);
    if (line) await new Promise<void>((go) => line.push(go));
    else lines.set(org, []);
    return () => {
      const next = lines.get(org)?.shift();
      if (next) next();
      else lines.delete(org);
    };
  };

  return {
    async check(d, ctx, only, org, xsdSet, saved) {
      // Validators this instance adds (tests' test_hold) exist on this thread only. Without a
      // thread (the CLI's own checks, `assay workflows import`) the check runs in place.
      const builtIn = d.steps.every((s) => !s.validator || getValidator(s.validator) !== undefined);
      if (!thread || !builtIn) {
        await prepareChecks(d.steps.map((s) => s.validator));
        if (xsdSet) {
          await prepareChecks(["xml_schema"]);
          ctx.xsdDocuments = await xsdSet(async (roots, found) => xsdWanted(roots, found));
        }
        checkDraft(d, stepFieldOf(only), ctx, undefined, saved);
        return;
      }
      offloaded++;
      const done = await turn(org);
      let configs: Record<string, unknown>[];
      try {
        // A draft still waiting when the server stops is not sent to a thread started anew.
        if (closed) throw serviceUnavailable("The server is shutting down.", 1);
        if (xsdSet)
          ctx.xsdDocuments = await xsdSet(async (roots, found) => {
            // `only`: a step route's walk past the deadline is named as that step's config (tooComplex).
            const [wanted] = await thread.call({ draft: EMPTY_DRAFT, xsdSet: { roots, found }, only });
            return wanted as unknown as XsdWanted;
          });
        configs = await thread.call({
          draft: d,
          resources: ctx.resources,
          xsdDocuments: ctx.xsdDocuments,
          only,
          saved,
        });
      } finally {
        done();
      }
      d.steps.forEach((s, i) => {
        s.config = configs[i]!;
      });
    },
    async checkStored(schema, resources, uri, org) {
      if (!thread) {
        await prepareChecks(["json_schema"]);
        checkStoredSchema(schema, resources, uri);
        return;
      }
      offloaded++;
      const done = await turn(org);
      try {
        if (closed) throw serviceUnavailable("The server is shutting down.", 1);
        await thread.call({ draft: EMPTY_DRAFT, stored: { schema, uri }, resources, only: null });
      } finally {
        done();
      }
    },
    async checkStoredXsd(text, uri, org) {
      if (!thread) {
        await prepareChecks(["xml_schema"]);
        return checkStoredXsd(text, uri);
      }
      offloaded++;
      const done = await turn(org);
      try {
        if (closed) throw serviceUnavailable("The server is shutting down.", 1);
        const [answer] = await thread.call({ draft: EMPTY_DRAFT, storedXsd: { text, uri }, only: null });
        return String(answer?.targetNamespace ?? "");
      } finally {
        done();
      }
    },
    get inFlight() {
      return thread?.inFlight ?? 0;
    },
    get offloaded() {
      return offloaded;
    },
    close() {
      closed = true;
      thread?.close();
    },
  };
}

/** The 400 of a check past its deadline, naming the step whose schema was compiling. */
function tooComplex(m: Omit<ToChecker, "id">, step: unknown, ms: number) {
  if (m.storedXsd)
    return invalid("The schema is invalid.", [
      {
        field: "schema",
        code: "too_complex",
        message: `The XSD document was not read within ${ms / 1000} s: split it into smaller documents that include or import each other.`,
      },
    ]);
  if (m.stored)
    return invalid("The schema is invalid.", [
      {
        field: "schema",
        code: "too_complex",
        message: `The schema did not compile within ${ms / 1000} s: simplify it (long chains of $ref and deeply nested subschemas cost the most).`,
      },
    ]);
  // The walk through stored XSDs (xsdSet) is of every step's imports, one step after another: a
  // whole workflow's save names the step it was reading (it named "steps"); a step route names the
  // step the route changes, the field its other config refusals name ("config").
  const i = m.xsdSet && m.only !== null ? m.only : typeof step === "number" && step >= 0 ? step : null;
  const prefix = i === null ? "steps" : stepFieldOf(m.only)(i);
  const field = i === null ? "steps" : prefix ? `${prefix}.config` : "config";
  const what = i === null ? "The workflow's step configs" : "The step's config";
  return invalid("The workflow definition is invalid.", [
    {
      field,
      code: "too_complex",
      message: `${what} did not compile within ${ms / 1000} s: simplify its schema or expressions (in an XML schema, nested group references and large occurrence counts multiply the size of a content model).`,
    },
  ]);
}
