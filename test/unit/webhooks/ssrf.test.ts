import { describe, expect, test } from "bun:test";
import { blockedAddressClass, parseV6 } from "../../../src/webhooks/ssrf.ts";

describe("blockedAddressClass", () => {
  const blocked: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["100.100.100.200", "shared (carrier-grade NAT)"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.1", "documentation"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"],
    ["2002:c0a8:0101::1", "private"],
    ["fd00:ec2::254", "private (unique local)"],
    ["fc00::1", "private (unique local)"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["2001:0:4136:e378::1", "reserved"],
    // IPv4-translated (::ffff:0:0/96, RFC 6145): issue #19. The embedded address names the
    // refusal when it is special; a public one is refused too (no real target has that form).
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:7f00:1", "loopback"],
    ["::ffff:0:a9fe:a9fe", "link-local (cloud metadata)"],
    ["::ffff:0:8.8.8.8", "reserved"],
    ["64:ff9b:1::a00:1", "reserved"], // local-use NAT64 (RFC 8215)
    ["::127.0.0.1", "reserved"], // IPv4-compatible (deprecated)
    ["::8.8.8.8", "reserved"],
    ["fec0::1", "reserved"], // site-local (deprecated)
    ["100::1", "reserved"], // discard-only
    ["2001:2::1", "reserved"], // benchmarking
    ["5f00::1", "reserved"], // segment routing (RFC 9602)
    ["3fff::1", "reserved"], // documentation (RFC 9637)
    ["198.18.0.1", "benchmarking"],
    ["203.0.113.7", "documentation"],
    ["192.52.193.1", "reserved"], // AMT relays
    ["240.0.0.1", "reserved"],
  ];
  for (const [ip, why] of blocked)
    test(`${ip} is refused (${why})`, () => expect(blockedAddressClass(ip)).toBe(why));

  const allowed = [
    "8.8.8.8",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.169.0.1",
    "100.128.0.1",
    "11.0.0.1",
  ];
  const allowed6 = [
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "2002:0808:0808::1",
  ];
  for (const ip of [...allowed, ...allowed6])
    test(`${ip} is public`, () => expect(blockedAddressClass(ip)).toBeNull());

  test("something that is not an address is refused", () => {
    expect(blockedAddressClass("example.com")).toBe("unparseable");
  });
});

describe("parseV6", () => {
  test("expands :: and an embedded IPv4 tail", () => {
    expect(parseV6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(parseV6("fe80::1")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseV6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
  test("null for malformed input", () => {
    for (const bad of ["1::2::3", "1:2:3", "12345::", "::1.2.3.999"]) expect(parseV6(bad)).toBeNull();
  });
});
