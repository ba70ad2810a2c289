// Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"):
// secret = "whsec_" + base64(random key); signed content = "{msg_id}.{timestamp}.{body}";
// signature = "v1," + base64(HMAC-SHA256(key, content)). The header is a space-separated list so
// that during a rotation both the new and the old secret sign each message.
import { createHmac, randomBytes } from "node:crypto";
import { uuidv7 } from "../lib/uuid.ts";

export const SECRET_PREFIX = "whsec_";
/** 32 bytes: the scheme asks for 24 to 64. */
const KEY_BYTES = 32;

export const newSecret = (): string => SECRET_PREFIX + randomBytes(KEY_BYTES).toString("base64");

/** A message id: no "." (the scheme forbids it in the signed content), sortable by time. */
export const newMessageId = (): string => `msg_${uuidv7().replaceAll("-", "")}`;

export function sign(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  return `v1,${createHmac("sha256", key).update(`${msgId}.${timestamp}.${body}`).digest("base64")}`;
}

/** The webhook-id, webhook-timestamp and webhook-signature headers for one attempt. */
export function signatureHeaders(
  secrets: string[],
  msgId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => sign(s, msgId, timestamp, body)).join(" "),
  };
}
