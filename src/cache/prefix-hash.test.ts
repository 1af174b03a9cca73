import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { blockDigest, chainHash, createPrefixHashMemo, EMPTY_PREFIX_HASH, prefixHashes } from "./prefix-hash.ts";

describe("prefix hashes", () => {
  test("property: chainHash is SHA-1 of previous, a NUL, then the bytes (one-shot or hasher alike); blockDigest is SHA-1 in base64", () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ unit: "binary" }), (previous, bytes) => {
        expect(chainHash(previous, bytes)).toBe(createHash("sha1").update(previous).update("\u0000").update(bytes).digest("hex"));
        expect(blockDigest(bytes)).toBe(createHash("sha1").update(bytes).digest("base64"));
      }),
      { numRuns: 300 },
    );
  });

  test("equal prefixes hash alike, a memo changes nothing, and a change anywhere changes every later hash", () => {
    const blocks = ["a", "b", "c"].map((bytes) => ({ bytes }));
    const plain = prefixHashes(blocks);
    expect(prefixHashes(blocks, createPrefixHashMemo())).toEqual(plain);
    const changed = prefixHashes([{ bytes: "a" }, { bytes: "B" }, { bytes: "c" }]);
    expect(changed[0]).toBe(plain[0]);
    expect(changed[1]).not.toBe(plain[1]);
    expect(changed[2]).not.toBe(plain[2]);
    expect(plain[0]).not.toBe(EMPTY_PREFIX_HASH);
  });
});
