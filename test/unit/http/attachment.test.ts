// Content-Disposition of a submission's download (src/http/security.ts attachment): the ASCII
// fallback puts one "_" for each character it cannot carry, an emoji included (it put one for
// each UTF-16 code unit: "😀.json" fell back to "__.json"); filename* keeps the exact name.
import { expect, test } from "bun:test";
import { attachment } from "../../../src/http/security.ts";

test.each([
  ["😀.json", `attachment; filename="_.json"; filename*=UTF-8''%F0%9F%98%80.json`],
  [
    "👩‍👩‍👧.csv",
    `attachment; filename="_____.csv"; filename*=UTF-8''%F0%9F%91%A9%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7.csv`,
  ],
  ["cafe\u0301.xml", `attachment; filename="cafe_.xml"; filename*=UTF-8''cafe%CC%81.xml`],
  ['a"b;c%.txt', `attachment; filename="a_b_c_.txt"; filename*=UTF-8''a%22b%3Bc%25.txt`],
])("%j → %s", (name, header) => {
  expect(attachment(name)).toBe(header);
});
