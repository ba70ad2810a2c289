// ASSAY_HOST / --host: an IPv6 address may be written as URLs write it, in brackets. Bun listened
// on "[::1]", but the server's URL (banner, log, Location without ASSAY_BASE_URL) bracketed it
// again: "http://[[::1]]:8080". The setting keeps the bare address.
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";

test("a bracketed IPv6 address is the bare address, from the variable or the flag", () => {
  expect(loadConfig({ ASSAY_HOST: "[::1]" }).host).toBe("::1");
  expect(loadConfig({}, { host: "[fe80::1%eth0]" }).host).toBe("fe80::1%eth0");
});

test("other hosts are kept as written", () => {
  for (const host of ["::1", "127.0.0.1", "0.0.0.0", "localhost", "[::1", "::1]"])
    expect(loadConfig({ ASSAY_HOST: host }).host).toBe(host);
});
