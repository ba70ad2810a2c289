// HTTPS without a reverse proxy (docs/deploy.md, "HTTPS"): ASSAY_TLS_CERT_FILE and
// ASSAY_TLS_KEY_FILE, PEM files read once at start. Every problem is found before anything is
// written, with the setting it comes from: a file that cannot be read, one that is not PEM, a key
// that is not the certificate's (the start's probe listens with them: src/server.ts).
import { readFileSync } from "node:fs";
import { ConfigError } from "../config.ts";

// Named as both spellings: a setting may come from the environment or from its flag.
const CERT = "ASSAY_TLS_CERT_FILE (--tls-cert-file)";
const KEY = "ASSAY_TLS_KEY_FILE (--tls-key-file)";

export interface TlsFiles {
  cert: string;
  key: string;
}

export function loadTls(config: {
  tls_cert_file: string | null;
  tls_key_file: string | null;
}): TlsFiles | null {
  if (config.tls_cert_file === null || config.tls_key_file === null) return null;
  const read = (setting: string, path: string, what: RegExp, kind: string): string => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      const code = (e as { code?: string }).code;
      throw new ConfigError([`${setting}: cannot read "${path}"${code ? ` (${code})` : ""}`]);
    }
    if (!what.test(text)) throw new ConfigError([`${setting}: "${path}" holds no PEM ${kind}`]);
    return text;
  };
  return {
    cert: read(CERT, config.tls_cert_file, /-----BEGIN CERTIFICATE-----/, "certificate"),
    key: read(KEY, config.tls_key_file, /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, "private key"),
  };
}

/** A listen refused for its certificate or key (Bun's `ERR_OSSL_…`), as the setting's problem. */
export function tlsListenProblem(e: unknown): ConfigError | null {
  const code = (e as { code?: string })?.code ?? "";
  if (!code.startsWith("ERR_OSSL")) return null;
  const why = code.includes("KEY_VALUES_MISMATCH")
    ? "the key is not the certificate's"
    : code.includes("ENCRYPT") || code.includes("BAD_DECRYPT")
      ? "the key is encrypted (give it unencrypted, readable by the server only)"
      : `the certificate or key was refused (${code})`;
  return new ConfigError([`${CERT} / ${KEY}: ${why}`]);
}
