/**
 * A request body's flat blocks and per-layer fingerprints, computed incrementally against the
 * previous request's digest: Pi serializes every request anew, but between two requests of a
 * session the tools, the system prompt and most messages are the same JSON. A tool, system
 * block or message that is structurally equal to the one at the same place in the previous
 * body (ignoring `cache_control`, which changes neither the bytes nor a fingerprint) keeps
 * its canonical bytes and token estimate; the message prefix hashes are reused up to the first
 * message that differs and chained from there.
 *
 * Exact: `digestBody(body, previous)` has the same `bytes`, `fingerprint` and `tokens` as
 * `digestBody(body)` (= `flattenRequest` + `fingerprintRequest` + the default estimator)
 * whatever `previous` is; `body-digest.test.ts` checks it on generated bodies.
 */
import { flattenRequest, messageBlocks, type FlatBlock } from "./flatten.ts";
import { fingerprintRequest, type LayerFingerprints } from "./fingerprints.ts";
import { chainHash, EMPTY_PREFIX_HASH } from "./prefix-hash.ts";
import { createCharRatioEstimator } from "./token-estimator.ts";
import type { WireMessage, WireRequestBody } from "./wire-types.ts";

export interface BodyDigest {
  /** The body's tools, system and messages as given (compared with the next body's). */
  body: WireRequestBody;
  /** `flattenRequest(body)` (marks included); an unmarked block the last body had at the same place may be the last digest's, pointing at that body's equal block. */
  blocks: FlatBlock[];
  /** `fingerprintRequest(body)`. */
  fingerprint: LayerFingerprints;
  /** Default char-ratio token estimate of each block, aligned with `blocks`. */
  tokens: number[];
  /** How many leading messages are the same as the previous digest's (0 without one). */
  unchanged: number;
}

const estimate = createCharRatioEstimator();

/** Whether `x` and `y` serialize alike: equal primitives, or plain data `sameData` finds alike (calls only for two objects). */
const sameValue = (x: unknown, y: unknown): boolean =>
  x === y || (typeof x === "object" && typeof y === "object" && x !== null && y !== null && sameData(x, y, false));

/**
 * Whether `a` and `b` serialize to the same JSON (same keys in the same order); with
 * `skipMark`, a top-level `cache_control` is ignored. Conservative: anything but plain data
 * counts as different.
 */
function sameJson(a: unknown, b: unknown, skipMark = false): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return sameData(a, b, skipMark);
}

/** `sameJson` of two objects; primitives are compared in place (no call per string: this runs over every block of every request). */
function sameData(a: object, b: object, skipMark: boolean): boolean {
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const pa = Object.getPrototypeOf(a);
  const pb = Object.getPrototypeOf(b);
  if ((pa !== Object.prototype && pa !== null) || (pb !== Object.prototype && pb !== null)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const ka = Object.keys(x);
  const kb = Object.keys(y);
  let i = 0;
  let j = 0;
  for (;;) {
    if (skipMark) {
      while (i < ka.length && ka[i] === "cache_control") i++;
      while (j < kb.length && kb[j] === "cache_control") j++;
    }
    if (i === ka.length || j === kb.length) return i === ka.length && j === kb.length;
    if (ka[i] !== kb[j] || !sameValue(x[ka[i]], y[kb[j]])) return false;
    i++;
    j++;
  }
}

/** Whether two lists of blocks flatten to the same bytes. */
function sameBlocks(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], true)) return false;
  return true;
}

/** A message's blocks as `flattenRequest` reads them (string content is one text block). */
const contentOf = (m: WireMessage): unknown[] => messageBlocks(m);

const systemOf = (body: WireRequestBody): unknown[] =>
  typeof body.system === "string" ? (body.system.length > 0 ? [{ type: "text", text: body.system }] : []) : (body.system ?? []);

/** Full digest: what the incremental one must equal. */
function freshDigest(body: WireRequestBody): BodyDigest {
  const blocks = flattenRequest(body);
  return { body, blocks, fingerprint: fingerprintRequest(body, blocks), tokens: blocks.map(estimate), unchanged: 0 };
}

/**
 * The previous digest's blocks `from..from+n` for `entries` (the same JSON, marks aside): the
 * very block when its place and mark are unchanged (its `block` then is the previous body's,
 * equal to this one's), else a copy with this body's mark.
 */
function reused(previous: BodyDigest, from: number, entries: readonly unknown[], messageIndex: number, out: { blocks: FlatBlock[]; tokens: number[] }): void {
  for (let i = 0; i < entries.length; i++) {
    const was = previous.blocks[from + i];
    const block = entries[i] as Record<string, unknown>;
    const mark = block.cache_control as FlatBlock["mark"];
    if (!mark && !was.mark && was.messageIndex === messageIndex) out.blocks.push(was);
    else {
      const b: FlatBlock = { layer: was.layer, messageIndex, blockIndex: was.blockIndex, role: was.role, type: was.type, block, bytes: was.bytes };
      if (mark) b.mark = mark;
      out.blocks.push(b);
    }
    out.tokens.push(previous.tokens[from + i]);
  }
}

/** `body`'s digest, reusing what it shares with `previous` (the same result as without it). */
export function digestBody(body: WireRequestBody, previous?: BodyDigest): BodyDigest {
  if (!previous) return freshDigest(body);
  const before = previous.body;
  const tools = body.tools ?? [];
  const system = systemOf(body);
  if (!sameBlocks(tools, before.tools ?? []) || !sameBlocks(system, systemOf(before))) return freshDigest(body);
  const out = { blocks: [] as FlatBlock[], tokens: [] as number[] };
  reused(previous, 0, tools, -1, out);
  reused(previous, tools.length, system, -1, out);

  // Messages: reuse every message equal to the previous one at its index; chain hashes from the first that differs.
  let at = tools.length + system.length; // the previous digest's first block of message `mi`
  const messages: string[] = [];
  let h = EMPTY_PREFIX_HASH;
  let chainIntact = true;
  let unchanged = 0;
  for (let mi = 0; mi < body.messages.length; mi++) {
    const message = body.messages[mi];
    const old = before.messages[mi];
    const content = contentOf(message);
    const oldContent = old === undefined ? undefined : contentOf(old);
    const start = out.blocks.length;
    const reuse = oldContent !== undefined && old!.role === message.role && sameBlocks(content, oldContent);
    if (reuse) reused(previous, at, content, mi, out);
    else
      for (const b of flattenRequest({ messages: [message] })) {
        const block = { ...b, messageIndex: mi };
        out.blocks.push(block);
        out.tokens.push(estimate(block));
      }
    if (oldContent !== undefined) at += oldContent.length;
    if (chainIntact && reuse) {
      unchanged = mi + 1;
      h = previous.fingerprint.messages[mi];
      messages.push(h);
      continue;
    }
    chainIntact = false;
    h = chainHash(h, `message:${mi}:${message.role}`);
    for (let k = start; k < out.blocks.length; k++) h = chainHash(h, out.blocks[k].bytes);
    messages.push(h);
  }
  return { body, blocks: out.blocks, fingerprint: { tools: previous.fingerprint.tools, system: previous.fingerprint.system, messages }, tokens: out.tokens, unchanged };
}
