// A self-signed certificate for the tests of HTTPS (test/tls.test.ts) and of PostgreSQL over TLS
// (test/pg-tls.test.ts): made by openssl (.ci/run installs it), valid 2 days, for localhost and
// 127.0.0.1.
export function selfSignedCertificate(cert: string, key: string, commonName = "localhost"): void {
  const r = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "2",
    "-subj",
    `/CN=${commonName}`,
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ]);
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
}
