// Entry point of the workflow check thread (src/workflows/check-thread.ts): a draft's save-time
// check — every step's schema compiled — and a stored JSON Schema's or XSD's run here, not on the HTTP
// thread. A build entrypoint (scripts/build.ts), started from a URL built in src/server.ts. Pure computation: the
// stored schemas the steps reference come with the draft; no database, no network.
import { AppError, toWire } from "../errors.ts";
import type { ThreadProgress } from "../lib/thread-calls.ts";
import { prepareChecks } from "../validators/registry.ts";
import type { FromChecker, ToChecker } from "./check-thread.ts";
import { stepFieldOf } from "./check-thread.ts";
import { checkStoredSchema, checkStoredXsd, xsdWanted } from "../schemas/check.ts";
import { checkDraft } from "./check.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<ToChecker>) => {
  const m = event.data;
  let answer: FromChecker;
  try {
    await prepareChecks(
      m.stored
        ? ["json_schema"]
        : m.storedXsd || m.xsdSet
          ? ["xml_schema"]
          : m.draft.steps.map((s) => s.validator),
    );
    // The step being compiled, so that a check past its deadline names it (check-thread.ts).
    const onStep = (step: number) => self.postMessage({ id: m.id, progress: step } satisfies ThreadProgress);
    // A walk's first report names its first root's step: the deadline starts at the first report,
    // and a thread descheduled between a report of -1 and the root's named `steps` (review, 2026-11-29).
    onStep(m.xsdSet?.roots[0]?.step ?? -1);
    if (m.xsdSet) {
      // Each root's step, so that a walk past its deadline names the step it was reading.
      const wanted = xsdWanted(m.xsdSet.roots, m.xsdSet.found, (root) => onStep(root.step ?? -1));
      self.postMessage({ id: m.id, ok: true, configs: [{ ...wanted }] } satisfies FromChecker);
      return;
    }
    if (m.storedXsd) {
      const targetNamespace = checkStoredXsd(m.storedXsd.text, m.storedXsd.uri);
      self.postMessage({ id: m.id, ok: true, configs: [{ targetNamespace }] } satisfies FromChecker);
      return;
    }
    if (m.stored) checkStoredSchema(m.stored.schema, m.resources ?? {}, m.stored.uri);
    else
      checkDraft(
        m.draft,
        stepFieldOf(m.only),
        { resources: m.resources, xsdDocuments: m.xsdDocuments },
        onStep,
        m.saved,
      );
    answer = { id: m.id, ok: true, configs: m.draft.steps.map((s) => s.config ?? {}) };
  } catch (e) {
    answer =
      e instanceof AppError
        ? { id: m.id, ok: false, error: toWire(e) }
        : { id: m.id, ok: false, failure: String((e as Error)?.stack ?? e) };
  }
  self.postMessage(answer);
};
