// Measure 1's peer: the sync run as a team would write it in an afternoon on Node — Fastify, Ajv
// and better-sqlite3 (issue #26). Per request: the bearer token's SHA-256 looked up in a tokens
// table, the body kept as bytes and JSON.parse'd, the compiled Ajv check, the body's SHA-256,
// the submission and the run inserted in one transaction (WAL, synchronous=NORMAL: Assay's own
// durability), and the 201 with the run's JSON after the commit. Plain JavaScript: Node runs it
// as it is. Usage: PEER_TOKEN=… node scripts/bench/peer-fastify.mjs <data-dir> <schema.json>
// (prints the URL it listens on). The bench skips it when Node or its packages are missing.
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import Database from "better-sqlite3";
import Fastify from "fastify";

const [dataDir, schemaFile] = process.argv.slice(2);
const token = process.env.PEER_TOKEN;
if (!dataDir || !schemaFile || !token)
  throw new Error("usage: PEER_TOKEN=… node peer-fastify.mjs <dir> <schema>");

const sha256 = (data) => createHash("sha256").update(data).digest("hex");
mkdirSync(dataDir, { recursive: true });
const db = new Database(join(dataDir, "peer.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`
  CREATE TABLE IF NOT EXISTS tokens (digest TEXT PRIMARY KEY, user_id INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS submissions (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL,
    content_type TEXT NOT NULL, size INTEGER NOT NULL, content BLOB NOT NULL, created_at TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, submission_id INTEGER NOT NULL REFERENCES submissions(id),
    user_id INTEGER NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, created_at TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
`);
db.prepare("INSERT OR IGNORE INTO tokens (digest, user_id) VALUES (?, 1)").run(sha256(token));

const ajv = new Ajv2020({ allErrors: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(schemaFile, "utf8")));
const userOf = db.prepare("SELECT user_id FROM tokens WHERE digest = ?");
const insertSubmission = db.prepare(
  "INSERT INTO submissions (sha256, content_type, size, content, created_at) VALUES (?, ?, ?, ?, ?)",
);
const insertRun = db.prepare(
  "INSERT INTO runs (id, submission_id, user_id, status, result, created_at) VALUES (?, ?, ?, ?, ?, ?)",
);
const store = db.transaction((run, body, digest) => {
  const sid = insertSubmission.run(
    digest,
    "application/json",
    body.length,
    body,
    run.created_at,
  ).lastInsertRowid;
  insertRun.run(run.id, sid, run.user_id, run.status, JSON.stringify(run.result), run.created_at);
  return Number(sid);
});

const app = Fastify({ logger: false });
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
app.post("/", (req, reply) => {
  const m = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? "");
  const user = m ? userOf.get(sha256(m[1])) : undefined;
  if (!user) return reply.code(401).send({ code: "authentication_required" });
  let doc;
  try {
    doc = JSON.parse(req.body.toString("utf8"));
  } catch {
    return reply.code(400).send({ code: "invalid_json" });
  }
  const started = new Date();
  const ok = validate(doc);
  const result = { valid: ok, errors: ok ? [] : validate.errors };
  const run = {
    id: randomUUID(),
    user_id: user.user_id,
    status: ok ? "succeeded" : "failed",
    result,
    created_at: started.toISOString(),
  };
  const digest = sha256(req.body);
  const submissionId = store(run, req.body, digest);
  return reply
    .code(201)
    .send({ ...run, submission: { id: submissionId, sha256: digest, size: req.body.length } });
});

const address = await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(`listening on ${address}\n`);
process.on("SIGTERM", async () => {
  await app.close();
  db.close();
  process.exit(0);
});
