// Size bounds at, just under and just over each limit (docs/limits.md): request bodies (run
// endpoint and the rest), metadata, filename, steps per workflow, step config size, page size,
// request head size. Each refusal is a whole JSON error object and stores nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const PAYLOAD = 4_194_304;
const BODY = 2_097_152; // the default max_body_bytes
const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
const runs = (wf: string) => `${WORKFLOWS}${wf}/runs/`;
const TEXT = { "content-type": "text/plain" };
const tooLarge = (max: number) =>
  errorBody(413, "payload_too_large", `The request body exceeds the limit of ${max} bytes.`);

let s: TestServer;
let exec: string;
let author: string;
beforeAll(async () => {
  s = await startTestServer({ max_payload_bytes: PAYLOAD });
  exec = (await s.user("exec", "acme", "executor")).token;
  author = (await s.user("author", "acme", "author")).token;
  await createWorkflow(s, author, {
    slug: "text",
    allowed_file_types: ["TEXT", "JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/**
 * Sends `head` on a raw socket, then optionally `drip` (one byte) every `dripMs`; resolves with the
 * answer once the server has answered or closed, or after `waitMs` (closed: false).
 */
function rawHttp(port: number, head: string, opts: { waitMs?: number; dripMs?: number; drip?: string } = {}) {
  return new Promise<{ status: number; text: string; closed: boolean; ms: number }>((resolve) => {
    const t0 = Date.now();
    const sock = connect(port, "127.0.0.1");
    let out = "";
    let drip: ReturnType<typeof setInterval> | undefined;
    const done = (closed: boolean) => {
      clearTimeout(timer);
      clearInterval(drip);
      sock.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0);
      resolve({ status, text: out, closed, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => done(false), opts.waitMs ?? 10_000);
    sock.on("data", (d) => {
      out += d.toString();
      const end = out.indexOf("\r\n\r\n");
      const len = /content-length: (\d+)/i.exec(out)?.[1];
      if (end >= 0 && (len === undefined || out.length - end - 4 >= Number(len))) done(true);
    });
    sock.on("close", () => done(true));
    sock.on("error", () => {});
    sock.on("connect", () => {
      sock.write(head);
      if (opts.dripMs) drip = setInterval(() => sock.write(opts.drip ?? "a"), opts.dripMs);
    });
  });
}
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
const chunked = (bytes: Uint8Array) =>
  new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += 16384) c.enqueue(bytes.subarray(i, i + 16384));
      c.close();
    },
  });

/**
 * Streams a chunked body on a raw socket as a client does: `head` (with Transfer-Encoding:
 * chunked), then chunks of `chunk` bytes of `x`, each once the last has drained, until the answer
 * is complete or `total` bytes are sent; gives up after `waitMs` without an answer or a chunk
 * taken (a server that stops reading). The body's end (the last chunk, `0`) is sent only after
 * the answer, so an answer always came before the client finished sending, however fast either
 * side is; another request follows on the same connection. Resolves with the answer (status 0:
 * none came), the bytes sent by then, and the status of the next request (0: the server closed
 * the connection, which is allowed; null: it hung).
 */
function streamChunked(port: number, head: string, total: number, chunk = 65_536, waitMs = 15_000) {
  return new Promise<{ status: number; body: unknown; sent: number; next: number | null }>((resolve) => {
    const sock = connect(port, "127.0.0.1");
    const frame = Buffer.concat([
      Buffer.from(`${chunk.toString(16)}\r\n`),
      Buffer.alloc(chunk, "x"),
      Buffer.from("\r\n"),
    ]);
    let out = "";
    let sent = 0;
    let first: { status: number; body: unknown; sent: number } | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** (Re)starts the wait: for the answer, for a chunk to drain, or for the next answer. */
    const arm = (then: () => void) => {
      clearTimeout(timer);
      timer = setTimeout(then, waitMs);
    };
    const end = (next: number | null) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...(first ?? { status: 0, body: null, sent }), next });
    };
    /** The first answer whole in `out`, or null. */
    const answer = (from: number) => {
      const headEnd = out.indexOf("\r\n\r\n", from);
      const len = /content-length: (\d+)/i.exec(out.slice(from, headEnd))?.[1];
      if (headEnd < 0 || len === undefined || out.length - headEnd - 4 < Number(len)) return null;
      const text = out.slice(headEnd + 4, headEnd + 4 + Number(len));
      return {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out.slice(from))?.[1] ?? 0),
        text,
        end: headEnd + 4 + Number(len),
      };
    };
    let firstEnd = 0;
    sock.on("data", (d) => {
      out += d.toString();
      if (!first) {
        const a = answer(0);
        if (!a) return;
        first = { status: a.status, body: JSON.parse(a.text), sent };
        firstEnd = a.end;
        arm(() => end(null)); // the next request hangs: null
        sock.write("0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
      }
      const b = answer(firstEnd);
      if (b) end(b.status);
    });
    sock.on("close", () => end(0));
    sock.on("error", () => {});
    sock.on("connect", async () => {
      sock.write(head);
      arm(() => end(null));
      while (!first && sent < total && !sock.destroyed) {
        if (!sock.write(frame)) await new Promise((r) => sock.once("drain", r));
        sent += chunk;
        if (!first) arm(() => end(null));
        await new Promise((r) => setImmediate(r));
      }
    });
  });
}

describe("run submissions: max_payload_bytes", () => {
  test("a body of exactly the limit is accepted, one byte under too", async () => {
    for (const size of [PAYLOAD, PAYLOAD - 1]) {
      const r = await call(s, "POST", runs("text"), { token: exec, raw: "a".repeat(size), headers: TEXT });
      expect([201, 202]).toContain(r.status);
      expect(r.json.submission.size).toBe(size);
    }
  });

  test("413 payload_too_large one byte over, with the limit in detail; nothing stored", async () => {
    const before = await s.count("submissions");
    const r = await call(s, "POST", runs("text"), {
      token: exec,
      raw: "a".repeat(PAYLOAD + 1),
      headers: TEXT,
    });
    expect(r.status).toBe(413);
    expect(r.json).toEqual(tooLarge(PAYLOAD));
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await s.count("submissions")).toBe(before);
  });

  test("413 for a body sent without Content-Length (chunked), counted while reading", async () => {
    const before = await s.count("submissions");
    const res = await fetch(s.url + runs("text"), {
      method: "POST",
      headers: { ...TEXT, authorization: `Bearer ${exec}` },
      body: chunked(new Uint8Array(PAYLOAD + 1).fill(97)),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(tooLarge(PAYLOAD));
    expect(await s.count("submissions")).toBe(before);
  });

  test("413 from a declared Content-Length of 10 GB, answered before any of it is sent", async () => {
    const r = await rawHttp(
      s.port,
      `POST ${runs("text")} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${exec}\r\n` +
        "Content-Type: text/plain\r\nContent-Length: 10000000000\r\n\r\n",
    );
    expect(r.status).toBe(413);
    expect(bodyOf(r.text)).toEqual(tooLarge(PAYLOAD));
  });
});

describe("other bodies: max_body_bytes (2 MiB)", () => {
  /** A valid workflow definition padded with JSON whitespace to exactly `size` bytes. */
  const definition = (slug: string, size: number) => {
    const json = JSON.stringify({
      slug,
      name: slug,
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    });
    return json.slice(0, -1) + " ".repeat(size - json.length) + "}";
  };
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(s.url + WORKFLOWS, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${author}`, ...headers },
      body,
    });

  test("a definition of exactly 2 MiB is accepted, one byte under too", async () => {
    expect((await post(definition("at-limit", BODY))).status).toBe(201);
    expect((await post(definition("under-limit", BODY - 1))).status).toBe(201);
  });

  test("413 payload_too_large one byte over; nothing stored", async () => {
    const before = await s.count("workflows");
    const res = await post(definition("over-limit", BODY + 1));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(tooLarge(BODY));
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await s.count("workflows")).toBe(before);
  });

  test("PUT and PATCH have the same limit", async () => {
    for (const method of ["PUT", "PATCH"]) {
      const res = await fetch(`${s.url}${WORKFLOWS}at-limit/`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${author}` },
        body: definition("at-limit", BODY + 1),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(tooLarge(BODY));
    }
  });

  test("without Content-Length (chunked): accepted at the limit, 413 one byte over", async () => {
    const enc = new TextEncoder();
    expect((await post(chunked(enc.encode(definition("chunked-at", BODY))))).status).toBe(201);
    const before = await s.count("workflows");
    const res = await post(chunked(enc.encode(definition("chunked-over", BODY + 1))));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(tooLarge(BODY));
    expect(await s.count("workflows")).toBe(before);
  });

  test("413 from a declared Content-Length of 10 GB, before authentication and before any byte", async () => {
    const r = await rawHttp(
      s.port,
      `POST ${WORKFLOWS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n`,
    );
    expect(r.status).toBe(413);
    expect(bodyOf(r.text)).toEqual(tooLarge(BODY));
  });
});

describe("chunked bodies well over the limit: the 413 while the client is still sending", () => {
  // A chunked body still arriving when the limit was crossed never got an answer: the copy read
  // under the limit (request.clone(), a tee) waited for its cancel, which settles only when the
  // original body is cancelled too. The client here sends until the answer comes (bounded), and
  // ends the body only after it.
  const chunkedHead = (method: string, path: string, extra = "") =>
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${extra}` +
    "Transfer-Encoding: chunked\r\n\r\n";

  for (const size of [3_000_000, 10_000_000]) {
    test(`${size / 1e6} MB without a token (PATCH): the whole 413, then the connection serves on`, async () => {
      const r = await streamChunked(s.port, chunkedHead("PATCH", "/api/v1/orgs/acme/"), size);
      expect(r.status).toBe(413);
      expect(r.body).toEqual(tooLarge(BODY));
      expect(r.sent).toBeGreaterThan(BODY); // answered once over the limit, not before
      expect([200, 0]).toContain(r.next!); // the next request is answered, or the connection closed
      expect((await call(s, "GET", "/api/v1/orgs/acme/", { token: author })).status).toBe(200);
    });
  }

  test("a workflow definition of 10 MB with a token, sent in 16 KiB chunks; nothing stored", async () => {
    const before = await s.count("workflows");
    const auth = `Authorization: Bearer ${author}\r\n`;
    const r = await streamChunked(s.port, chunkedHead("POST", WORKFLOWS, auth), 10_000_000, 16_384);
    expect(r.status).toBe(413);
    expect(r.body).toEqual(tooLarge(BODY));
    expect([200, 0]).toContain(r.next!);
    expect(await s.count("workflows")).toBe(before);
  });

  test("a run submission of 27 MB (its own limit, read by the run service) is the same 413", async () => {
    const before = await s.count("submissions");
    const head =
      `POST ${runs("text")} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${exec}\r\n` +
      "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
    const r = await streamChunked(s.port, head, 27_000_000);
    expect(r.status).toBe(413);
    expect(r.body).toEqual(tooLarge(PAYLOAD));
    expect([200, 0]).toContain(r.next!);
    expect(await s.count("submissions")).toBe(before);
  });
});

describe("submission fields", () => {
  const envelope = (extra: Record<string, unknown>) =>
    call(s, "POST", runs("text"), {
      token: exec,
      body: { content: "hello", content_type: "text/plain", ...extra },
    });
  const refused = async (
    r: Awaited<ReturnType<typeof call>>,
    field: string,
    code: string,
    message: string,
  ) => {
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The run request is invalid.", [{ field, code, message }]),
    );
  };
  /** metadata {"k":"xx…"} whose JSON text is exactly `size` bytes. */
  const metadataOf = (size: number) => ({ k: "x".repeat(size - 8) });
  const META = 16384;

  test("metadata of exactly 16 KiB is accepted, one byte under too (envelope and multipart)", async () => {
    for (const size of [META, META - 1]) {
      expect(JSON.stringify(metadataOf(size)).length).toBe(size);
      const r = await envelope({ metadata: metadataOf(size) });
      expect([201, 202]).toContain(r.status);
      const f = new FormData();
      f.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
      f.append("metadata", JSON.stringify(metadataOf(size)));
      expect([201, 202]).toContain((await call(s, "POST", runs("text"), { token: exec, raw: f })).status);
    }
  });

  test("400 metadata too_large one byte over (envelope and multipart); nothing stored", async () => {
    const before = await s.count("submissions");
    const message = `metadata may hold at most ${META} bytes.`;
    await refused(await envelope({ metadata: metadataOf(META + 1) }), "metadata", "too_large", message);
    const f = new FormData();
    f.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    f.append("metadata", JSON.stringify(metadataOf(META + 1)));
    await refused(
      await call(s, "POST", runs("text"), { token: exec, raw: f }),
      "metadata",
      "too_large",
      message,
    );
    expect(await s.count("submissions")).toBe(before);
  });

  test("a filename of 255 characters is accepted (envelope and X-Filename), 254 too", async () => {
    for (const len of [255, 254]) {
      const name = `${"n".repeat(len - 4)}.txt`;
      const a = await envelope({ filename: name });
      expect(a.json.submission.filename).toBe(name);
      const b = await call(s, "POST", runs("text"), {
        token: exec,
        raw: "hello",
        headers: { ...TEXT, "x-filename": name },
      });
      expect(b.json.submission.filename).toBe(name);
    }
  });

  test("400 filename too_long at 256 characters (envelope and X-Filename); nothing stored", async () => {
    const before = await s.count("submissions");
    const name = `${"n".repeat(252)}.txt`;
    const message = "filename may hold at most 255 characters.";
    await refused(await envelope({ filename: name }), "filename", "too_long", message);
    const raw = await call(s, "POST", runs("text"), {
      token: exec,
      raw: "hello",
      headers: { ...TEXT, "x-filename": name },
    });
    await refused(raw, "X-Filename", "too_long", message);
    expect(await s.count("submissions")).toBe(before);
  });
});

describe("workflow definitions", () => {
  const steps = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `s${i}`, validator: "syntax", config: {} }));
  const create = (slug: string, body: Record<string, unknown>) =>
    call(s, "POST", WORKFLOWS, {
      token: author,
      body: { slug, name: slug, allowed_file_types: ["JSON"], ...body },
    });

  test("50 steps are accepted, 49 too", async () => {
    expect((await create("steps-50", { steps: steps(50) })).status).toBe(201);
    expect((await create("steps-49", { steps: steps(49) })).status).toBe(201);
  });

  test("400 steps too_many at 51, by definition or by adding one step; nothing stored", async () => {
    const before = [await s.count("workflows"), await s.count("steps")];
    const r = await create("steps-51", { steps: steps(51) });
    const item = { field: "steps", code: "too_many", message: "A workflow may have at most 50 steps." };
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", "The workflow definition is invalid.", [item]));
    const add = await call(s, "POST", `${WORKFLOWS}steps-50/steps/`, {
      token: author,
      body: { name: "one more", validator: "syntax", config: {} },
    });
    expect(add.status).toBe(400);
    expect(add.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [item]),
    );
    expect([await s.count("workflows"), await s.count("steps")]).toEqual(before);
  });

  /** A json_schema step config whose JSON text is exactly `size` bytes. */
  const bigConfig = (size: number) => {
    const config = { schema: { description: "" } };
    config.schema.description = "d".repeat(size - JSON.stringify(config).length);
    return config;
  };

  test("a step config of exactly 1 MiB is accepted, one byte under too", async () => {
    for (const [slug, size] of [
      ["cfg-at", 1_048_576],
      ["cfg-under", 1_048_575],
    ] as const) {
      expect(JSON.stringify(bigConfig(size)).length).toBe(size);
      const r = await create(slug, {
        steps: [{ name: "big", validator: "json_schema", config: bigConfig(size) }],
      });
      expect(r.status).toBe(201);
    }
  });

  test("400 config too_large one byte over 1 MiB; nothing stored", async () => {
    const before = await s.count("workflows");
    const r = await create("cfg-over", {
      steps: [{ name: "big", validator: "json_schema", config: bigConfig(1_048_577) }],
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config",
          code: "too_large",
          message: "A step config may hold at most 1048576 bytes of JSON.",
        },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });
});

describe("a workflow's step configs with their snapshots: 64 MiB in all", () => {
  test("400 steps too_large: nine steps naming one ~7.9 MB stored XSD; nothing stored or compiled", async () => {
    const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
    const note = "Documentation of an element, long as a real standard's. ".repeat(140_000);
    const xsd = `<xs:schema ${XS}><xs:annotation><xs:documentation>${note}</xs:documentation></xs:annotation><xs:element name="a" type="xs:string"/></xs:schema>`;
    expect(xsd.length).toBeGreaterThan(7_800_000);
    const stored = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: author,
      body: { uri: "https://schemas.example.com/big.xsd", kind: "xsd", schema: xsd },
    });
    expect(stored.status).toBe(201);
    const step = (i: number) => ({
      name: `xsd ${i}`,
      validator: "xml_schema",
      config: { schema_type: "xsd", schema_uri: "https://schemas.example.com/big.xsd" },
    });
    const before = [await s.count("workflows"), await s.count("steps")];
    const r = await call(s, "POST", WORKFLOWS, {
      token: author,
      body: {
        slug: "pinned-total",
        name: "p",
        allowed_file_types: ["XML"],
        steps: Array.from({ length: 9 }, (_, i) => step(i)),
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps",
          code: "too_large",
          message:
            "With the stored schemas they reference, a workflow's step configs may hold at most 67108864 bytes of JSON in all.",
        },
      ]),
    );
    expect([await s.count("workflows"), await s.count("steps")]).toEqual(before);
    // Two such steps are well within it.
    const two = await call(s, "POST", WORKFLOWS, {
      token: author,
      body: { slug: "pinned-two", name: "p", allowed_file_types: ["XML"], steps: [step(0), step(1)] },
    });
    expect(two.status).toBe(201);
  }, 120_000);
});

describe("nesting in API request bodies: 256 levels", () => {
  /** A workflow whose JSON nests exactly `depth` levels: body, steps, step, config, schema, then "not"s. */
  const nested = (slug: string, depth: number) => {
    const schema = '{"not":'.repeat(depth - 5) + "{}" + "}".repeat(depth - 5);
    return `{"slug":"${slug}","name":"n","allowed_file_types":["JSON"],"steps":[{"name":"s","validator":"json_schema","config":{"schema":${schema}}}]}`;
  };
  const post = (body: string, contentType = "application/json") =>
    call(s, "POST", WORKFLOWS, { token: author, raw: body, headers: { "content-type": contentType } });
  const tooDeep = errorBody(400, "invalid_request", "The request body is nested too deeply.", [
    { field: "body", code: "too_deep", message: "Nesting deeper than 256 levels is not accepted." },
  ]);

  test("256 levels are accepted, 255 too; brackets inside strings do not count", async () => {
    expect((await post(nested("deep-256", 256))).status).toBe(201);
    expect((await post(nested("deep-255", 255))).status).toBe(201);
    const r = await call(s, "POST", WORKFLOWS, {
      token: author,
      body: {
        slug: "brackets",
        name: "[".repeat(150),
        description: "{".repeat(4000),
        allowed_file_types: ["JSON"],
      },
    });
    expect(r.status).toBe(201);
  });

  test("400 too_deep at 257 levels and at 100,000; nothing stored", async () => {
    const before = await s.count("workflows");
    for (const body of [nested("deep-257", 257), `{"name":${"[".repeat(100_000)}${"]".repeat(100_000)}}`]) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.json).toEqual(tooDeep);
    }
    expect(await s.count("workflows")).toBe(before);
  });

  test("415 for a form body, deep or not: API bodies are JSON, a form is never parsed", async () => {
    const r = await post(`name=${"[".repeat(300)}`, "application/x-www-form-urlencoded");
    expect(r.status).toBe(415);
    expect(r.json).toEqual(
      errorBody(
        415,
        "unsupported_media_type",
        'This endpoint takes a JSON object: send it as Content-Type: application/json, not "application/x-www-form-urlencoded".',
      ),
    );
  });
});

describe("page size", () => {
  const pageSizeError = errorBody(400, "invalid_request", "Invalid pagination parameters.", [
    { field: "page_size", code: "invalid", message: "page_size must be an integer from 1 to 200." },
  ]);
  for (const path of ["/api/v1/orgs/acme/runs/", WORKFLOWS]) {
    test(`${path}: page_size 200 and 199 are served, 201 and 0 are 400`, async () => {
      for (const size of [200, 199]) {
        const r = await call(s, "GET", `${path}?page_size=${size}`, { token: exec });
        expect(r.status).toBe(200);
      }
      for (const size of [201, 0, 100000000000]) {
        const r = await call(s, "GET", `${path}?page_size=${size}`, { token: exec });
        expect(r.status).toBe(400);
        expect(r.json).toEqual(pageSizeError);
      }
    });
  }
});

describe("pages and ids past 32 bits (PostgreSQL's INTEGER)", () => {
  const lists = ["runs", "audit", "workflows", "webhooks", "members", "schemas"];
  test("a page past 2^31 rows is an empty page on every list, as on SQLite", async () => {
    for (const list of lists) {
      const r = await call(s, "GET", `/api/v1/orgs/acme/${list}/?page_size=200&page=10737420`, {
        token: s.rootToken,
      });
      expect({ list, status: r.status, results: r.json.results }).toEqual({ list, status: 200, results: [] });
      expect(r.json.next).toBeNull();
    }
  });
  test("?workflow= with an id past 32 bits matches no run", async () => {
    for (const id of ["2147483648", "9999999999", "999999999999999"]) {
      const r = await call(s, "GET", `/api/v1/orgs/acme/runs/?workflow=${id}`, { token: s.rootToken });
      expect({ id, status: r.status, count: r.json.count }).toEqual({ id, status: 200, count: 0 });
    }
  });
});

describe("request head (Bun: 16 KiB, about 200 fields)", () => {
  const get = (headers: string) => `GET /healthz HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`;
  test("a head just under 16 KiB is served", async () => {
    const head = get(`X-Pad: ${"p".repeat(16_000)}\r\n`);
    expect((await rawHttp(s.port, head)).status).toBe(200);
  });
  test("431 for a head over 16 KiB and for too many fields, and the server keeps answering", async () => {
    expect((await rawHttp(s.port, get(`X-Pad: ${"p".repeat(16_400)}\r\n`))).status).toBe(431);
    const many = Array.from({ length: 300 }, (_, i) => `X-H${i}: v\r\n`).join("");
    expect((await rawHttp(s.port, get(many))).status).toBe(431);
    expect((await call(s, "GET", "/healthz")).status).toBe(200);
  });
  test("a method Bun does not know (FOO) gets no answer; one it knows but no route takes is our JSON 405", async () => {
    // Bun's parser knows a fixed list of methods (oven-sh/bun#6556) and closes the connection on
    // any other before the app sees it (docs/limits.md). Should Bun ever pass it on, this fails:
    // then check that the answer is the JSON 405 below.
    const req = (method: string) =>
      `${method} ${WORKFLOWS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${exec}\r\n\r\n`;
    expect(await rawHttp(s.port, req("FOO"))).toMatchObject({ status: 0, text: "", closed: true });
    const known = await rawHttp(s.port, req("PROPFIND"));
    expect(known.status).toBe(405);
    expect(bodyOf(known.text)).toEqual(
      errorBody(405, "method_not_allowed", "Method PROPFIND is not allowed on this path."),
    );
    expect((await call(s, "GET", "/healthz")).status).toBe(200);
  });
});

describe("hostile documents end in findings, never a 5xx or a hang (bounds in src/validators/limits.ts)", () => {
  beforeAll(async () => {
    const syntax = { name: "syntax", validator: "syntax", config: {} };
    await createWorkflow(s, author, {
      slug: "data",
      allowed_file_types: ["JSON", "YAML"],
      fail_fast: false,
      steps: [syntax, { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
    });
    await createWorkflow(s, author, { slug: "xml", allowed_file_types: ["XML"], steps: [syntax] });
    await createWorkflow(s, author, {
      slug: "csv",
      allowed_file_types: ["CSV"],
      steps: [{ name: "table", validator: "csv_table", config: { schema: { fields: [{ name: "a" }] } } }],
    });
  });
  /** Submits, waits for the final run (bounded), returns the first step's finding codes. */
  const codes = async (wf: string, contentType: string, body: string) => {
    const r = await call(s, "POST", runs(wf), {
      token: exec,
      raw: body,
      headers: { "content-type": contentType },
    });
    expect([201, 202]).toContain(r.status);
    const run = await waitForRun(s, exec, r.json.url, 30_000);
    expect(["succeeded", "failed"]).toContain(run.status);
    return run.steps[0].findings.map((f: { code: string }) => f.code) as string[];
  };
  const nestedArrays = (d: number) => "[".repeat(d) + "]".repeat(d);
  const nestedObjects = (d: number) => '{"a":'.repeat(d) + "1" + "}".repeat(d);

  test("JSON nesting: 512 levels parse, 513 and 200,000 are json.max_depth", async () => {
    expect(await codes("data", "application/json", nestedArrays(512))).toEqual([]);
    expect(await codes("data", "application/json", nestedArrays(513))).toEqual(["json.max_depth"]);
    expect(await codes("data", "application/json", nestedObjects(200_000))).toEqual(["json.max_depth"]);
  });

  test("YAML: an alias bomb is yaml.alias_limit; deep nesting is a finding", async () => {
    const names = "abcdefghij";
    const bomb = [`a: &a [${Array(9).fill('"lol"').join(",")}]`]
      .concat([...names.slice(1)].map((n, i) => `${n}: &${n} [${Array(9).fill(`*${names[i]}`).join(",")}]`))
      .join("\n");
    expect(await codes("data", "application/yaml", bomb)).toEqual(["yaml.alias_limit"]);
    expect(await codes("data", "application/yaml", `a:\n  ${"- ".repeat(600)}1\n`)).toEqual([
      "yaml.max_depth",
    ]);
  });

  test("XML: billion laughs is xml.entity_expansion_limit; 257 levels are xml.max_depth", async () => {
    const entities = Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`,
    ).join("");
    const lol = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY lol "lol">${entities}]><l>&lol9;</l>`;
    expect(await codes("xml", "application/xml", lol)).toEqual(["xml.entity_expansion_limit"]);
    expect(await codes("xml", "application/xml", "<a>".repeat(256) + "</a>".repeat(256))).toEqual([]);
    expect(await codes("xml", "application/xml", "<a>".repeat(257) + "</a>".repeat(257))).toEqual([
      "xml.max_depth",
    ]);
  });

  test("XML: an external entity is never loaded", async () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>`;
    const r = await call(s, "POST", runs("xml"), {
      token: exec,
      raw: xxe,
      headers: { "content-type": "application/xml" },
    });
    const run = await waitForRun(s, exec, r.json.url);
    expect(JSON.stringify(run)).not.toContain("root:");
  });

  test("CSV: 10,000 columns pass, 10,001 are csv.too_many_columns; 1,000,001 rows csv.too_many_rows", async () => {
    const row = (n: number) => Array(n).fill("x").join(",");
    const wide = (n: number) =>
      `${["a", ...Array.from({ length: n - 1 }, (_, i) => `c${i}`)].join(",")}\n${row(n)}\n`;
    expect(await codes("csv", "text/csv", wide(10_000))).not.toContain("csv.too_many_columns");
    expect(await codes("csv", "text/csv", wide(10_001))).toContain("csv.too_many_columns");
    expect(await codes("csv", "text/csv", `a\n${"x\n".repeat(1_000_001)}`)).toContain("csv.too_many_rows");
  });
});

describe("findings: a message is at most 2,000 characters, a step's findings at most 4 MiB", () => {
  const rule = (message: string) => ({
    name: "no-x",
    validator: "text_rules",
    config: { max_findings: 10_000, patterns: [{ regex: "x", must: "not_match", message }] },
  });

  test("a rule message over 2,000 characters is refused at save, naming the field; nothing stored", async () => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", WORKFLOWS, {
      token: author,
      body: {
        slug: "long-message",
        name: "m",
        allowed_file_types: ["TEXT"],
        steps: [rule("m".repeat(2001))],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.patterns[0].message",
          code: "invalid",
          message: "must not have more than 2000 characters",
        },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });

  test("a filled-in message is cut at 2,000 characters; a step stops at 4 MiB of findings, truncated", async () => {
    await createWorkflow(s, author, {
      slug: "many-findings",
      allowed_file_types: ["TEXT"],
      steps: [rule("m".repeat(2000))],
    });
    await createWorkflow(s, author, {
      slug: "echo",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "echo",
          validator: "assertions",
          config: { rules: [{ id: "r", expr: "false", message: "{{ data.s }}" }] },
        },
      ],
    });
    // 3,000 findings of 2,000 characters (and their paths and rules): past 4 MiB after 2,096.
    const r = await call(s, "POST", runs("many-findings"), {
      token: exec,
      raw: "x".repeat(3000),
      headers: TEXT,
    });
    const run = await waitForRun(s, exec, r.json.url, 30_000);
    expect(run.steps[0]).toMatchObject({ status: "failed", findings_count: 2096 });
    expect(run.summary.truncated).toBe(true);
    const data = await call(s, "POST", runs("echo"), {
      token: exec,
      raw: JSON.stringify({ s: "y".repeat(5000) }),
      headers: { "content-type": "application/json", "x-submission-mode": "raw" },
    });
    const echoed = (await waitForRun(s, exec, data.json.url, 30_000)).steps[0].findings[0].message;
    expect(echoed).toBe(`${"y".repeat(1999)}…`);
  });
});

describe("slow clients (idle_timeout_s = 1)", () => {
  let slow: TestServer;
  let token: string;
  beforeAll(async () => {
    slow = await startTestServer({ idle_timeout_s: 1 });
    token = slow.rootToken;
    await createWorkflow(slow, token, {
      slug: "text",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => slow.close());
  const head = (path: string, extra: string) =>
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n${extra}\r\n`;

  // Bun checks its timers every few seconds: 1 s of idleness is noticed within about 5 s.
  for (const [label, path, extra, drip] of [
    ["a run body", runs("text"), "Content-Type: text/plain\r\nContent-Length: 100000\r\n", " "],
    ["a workflow body", WORKFLOWS, "Content-Type: application/json\r\nContent-Length: 100000\r\n", " "],
    [
      "a chunked workflow body",
      WORKFLOWS,
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
      "1\r\n \r\n",
    ],
  ])
    test(`${label} trickling one byte per 200 ms is cut off; nothing is stored`, async () => {
      const before = [await slow.count("submissions"), await slow.count("workflows")];
      const r = await rawHttp(slow.port, head(path, extra), { dripMs: 200, drip, waitMs: 15_000 });
      expect(r.closed).toBe(true);
      expect(r.ms).toBeLessThan(10_000);
      expect(r.status === 0 || r.status >= 400).toBe(true);
      expect([await slow.count("submissions"), await slow.count("workflows")]).toEqual(before);
      expect((await call(slow, "GET", "/healthz")).status).toBe(200);
    });

  test("a request head that never ends is cut off by Bun (about 10 s, whatever the setting)", async () => {
    const r = await rawHttp(slow.port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n", { waitMs: 20_000 });
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(16_000);
  });
});
