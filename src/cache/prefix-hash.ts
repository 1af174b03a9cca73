/**
 * Chained prefix hashes: `prefixHashes(blocks)[i]` identifies the byte prefix ending with
 * block `i` (inclusive). Equal hashes ⇔ equal prefixes (up to SHA-1 collisions).
 * The chain runs over per-block digests; `memo` (bytes → digest) lets a run hash each
 * distinct block once instead of once per request.
 */
import * as crypto from "node:crypto";

/** One-shot SHA-1 (`crypto.hash`, Node ≥ 20.12 and bun: no hasher object per call), else a hasher. */
const sha1: (data: string, encoding: "hex" | "base64") => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (data, encoding) => (crypto as unknown as { hash(alg: string, data: string, enc: string): string }).hash("sha1", data, encoding)
    : (data, encoding) => crypto.createHash("sha1").update(data).digest(encoding);

export function chainHash(previous: string, bytes: string): string {
  return sha1(`${previous}\u0000${bytes}`, "hex");
}

/** Hash of the empty prefix. */
export const EMPTY_PREFIX_HASH = "0".repeat(40);

/** Memo of a run: block bytes → digest, and (prefix hash, block digest) → next prefix hash. */
export interface PrefixHashMemo {
  blocks: Map<string, string>;
  chain: Map<string, string>;
}

export function createPrefixHashMemo(): PrefixHashMemo {
  return { blocks: new Map(), chain: new Map() };
}

export function blockDigest(bytes: string, memo?: PrefixHashMemo): string {
  const known = memo?.blocks.get(bytes);
  if (known) return known;
  const d = sha1(bytes, "base64");
  memo?.blocks.set(bytes, d);
  return d;
}

/** The hash of the empty prefix of a cache keyed by `key` (a model): different keys never share a prefix. */
export function keyedEmptyPrefix(key: string | undefined): string {
  return key === undefined || key === "" ? EMPTY_PREFIX_HASH : chainHash(EMPTY_PREFIX_HASH, `cache-key|${key}`);
}

export function prefixHashes(blocks: ReadonlyArray<{ bytes: string }>, memo?: PrefixHashMemo, seed: string = EMPTY_PREFIX_HASH): string[] {
  const out: string[] = [];
  let h = seed;
  for (const b of blocks) {
    const d = blockDigest(b.bytes, memo);
    const key = h + d;
    let next = memo?.chain.get(key);
    if (!next) {
      next = chainHash(h, d);
      memo?.chain.set(key, next);
    }
    h = next;
    out.push(h);
  }
  return out;
}
