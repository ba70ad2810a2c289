// A real webhook receiver on 127.0.0.1 for the webhook tests, and a signature check written from
// the Standard Webhooks specification's verification steps — independent of src/webhooks.
import { createHmac, timingSafeEqual } from "node:crypto";

export interface Received {
  headers: Headers;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  path: string;
}

type Responder = (req: Request, n: number) => Response | Promise<Response>;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  respond(fn: Responder): void;
  /** Polls until `pred` holds for the received requests (bounded); returns them. */
  waitFor(pred: (r: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  stop(): Promise<void>;
}

export function startReceiver(port = 0): Receiver {
  const received: Received[] = [];
  let responder: Responder = () => new Response("ok");
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      let json: Received["json"];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: "?", timestamp: "", data: {} };
      }
      received.push({ headers: req.headers, body, json, path: new URL(req.url).pathname });
      return responder(req, received.length);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    received,
    respond(fn) {
      responder = fn;
    },
    async waitFor(pred, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(received)) {
        if (Date.now() > deadline)
          throw new Error(`receiver: condition not met after ${timeoutMs} ms (${received.length} received)`);
        await Bun.sleep(10);
      }
      return received;
    },
    stop: () => server.stop(true),
  };
}

/**
 * Standard Webhooks verification: key = base64 decode of the secret after "whsec_"; expected =
 * base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")); accept when any "v1,"
 * entry of the space-separated webhook-signature header matches (constant-time), and the
 * timestamp is within the tolerance.
 */
export function verifyStandardWebhook(secret: string, h: Headers, body: string, toleranceS = 300): boolean {
  const id = h.get("webhook-id");
  const ts = h.get("webhook-timestamp");
  const header = h.get("webhook-signature");
  if (!id || !ts || !header || !/^\d+$/.test(ts)) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > toleranceS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest();
  return header.split(" ").some((entry) => {
    const [version, sig] = entry.split(",");
    if (version !== "v1" || !sig) return false;
    const got = Buffer.from(sig, "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/** Polls `fn` until it returns a value that is not undefined (bounded). */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`condition not met after ${timeoutMs} ms`);
    await Bun.sleep(10);
  }
}

/** Makes `rx` hold every request until the returned function is called, then answer 200 "ok". */
export function holdAnswers(rx: Receiver): () => void {
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  rx.respond(async () => {
    await held;
    return new Response("ok");
  });
  return release;
}
