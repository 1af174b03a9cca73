/**
 * The frontier as a chain of deltas: what a flush entry carries instead of a full snapshot, and
 * how restore gets the frontier back. Pure.
 *
 * - `frontierDelta(previous, next)`: how a flush moved the frontier, or undefined when a delta
 *   cannot say it exactly (then the flush writes a checkpoint). Every delta is checked by
 *   folding it onto `previous` with the very fold restore uses.
 * - `foldFrontier(base)`: applies deltas in branch order onto a checkpoint (or the empty
 *   frontier), refusing one that does not follow the frontier it has (`from` ≠ its `flushSeq`).
 * - `frontierPart(…)`: delta or checkpoint for one flush. A checkpoint is written when there is
 *   none yet, or when the deltas since the last one would exceed `maxDeltas` entries or
 *   `chainRatio` × the last checkpoint's size: the file then grows linearly with the session
 *   (checkpoints cost at most 1/chainRatio of the deltas) and restore reads at most one
 *   checkpoint and (1 + chainRatio) × its size.
 */
import type { CompressedChain, Frontier, FrontierChain, FrontierDelta } from "./schema.ts";

/**
 * Chosen with `npm run bench:load` (5,000 messages, 500 flushes, last frontier ~500 KB; one
 * locked run per policy on a loaded 2-core machine): keeper entries 4.3 MB with 64 / 1 (14
 * checkpoints), 9.1 MB with 16 / 1, 2.9 MB with 256 / 1 (chains up to 189 deltas), 2.6 MB with
 * 256 / 2; restoring the state at the end of the longest chain took 1–37 ms in every policy.
 * 64 / 1 bounds a restore to 64 deltas and one checkpoint's size for 1.4 MB more than 256 / 1.
 */
export const CHECKPOINT_POLICY = { maxDeltas: 64, chainRatio: 1 } as const;
export type CheckpointPolicy = { maxDeltas: number; chainRatio: number };

// Every frontier field must be carried by a delta: adding one to the schema fails here until it is.
const CARRIED: Record<keyof Frontier, true> = {
  version: true,
  flushSeq: true,
  lastFlushAt: true,
  stubbedKeys: true,
  aliases: true,
  purgedErrorKeys: true,
  compressedChains: true,
  thinkingStripBoundaryTimestamp: true,
  frozenThroughTimestamp: true,
  seamThroughTimestamp: true,
};
void CARRIED;

/** Removals filter `list`, additions append: `next` must be `previous` filtered, then extended. */
function listDelta<T>(previous: readonly T[], next: readonly T[], keyOf: (x: T) => string): { add: T[]; drop: string[] } | undefined {
  const nextKeys = new Set(next.map(keyOf));
  const kept = previous.filter((x) => nextKeys.has(keyOf(x)));
  if (kept.length > next.length) return undefined;
  const drop = previous.filter((x) => !nextKeys.has(keyOf(x))).map(keyOf);
  return { add: next.slice(kept.length), drop: [...new Set(drop)] };
}

const chainKeyOf = (c: CompressedChain) => c.chainKey;
const same = <T>(a: T, b: T) => a === b || JSON.stringify(a) === JSON.stringify(b);

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => same(x, b[i]));
}

/** Field by field (aliases regardless of key order, as every reader treats them). */
export function sameFrontier(a: Frontier, b: Frontier): boolean {
  const aliasKeys = Object.keys(a.aliases);
  return (
    a.version === b.version &&
    a.flushSeq === b.flushSeq &&
    a.lastFlushAt === b.lastFlushAt &&
    a.thinkingStripBoundaryTimestamp === b.thinkingStripBoundaryTimestamp &&
    a.frozenThroughTimestamp === b.frozenThroughTimestamp &&
    a.seamThroughTimestamp === b.seamThroughTimestamp &&
    sameList(a.stubbedKeys, b.stubbedKeys) &&
    sameList(a.purgedErrorKeys, b.purgedErrorKeys) &&
    sameList(a.compressedChains, b.compressedChains) &&
    aliasKeys.length === Object.keys(b.aliases).length &&
    aliasKeys.every((k) => Object.hasOwn(b.aliases, k) && b.aliases[k] === a.aliases[k])
  );
}

const boundaryMove = (from: number | undefined, to: number | undefined) => (from === to ? undefined : (to ?? null));

/** How `previous` became `next`, or undefined when a delta cannot reproduce `next` exactly. */
export function frontierDelta(previous: Frontier, next: Frontier): FrontierDelta | undefined {
  const stubbed = listDelta(previous.stubbedKeys, next.stubbedKeys, String);
  const purged = listDelta(previous.purgedErrorKeys, next.purgedErrorKeys, String);
  const chains = listDelta(previous.compressedChains, next.compressedChains, chainKeyOf);
  if (!stubbed || !purged || !chains || previous.version !== next.version) return undefined;
  const setAliases = Object.fromEntries(Object.entries(next.aliases).filter(([k, v]) => !Object.hasOwn(previous.aliases, k) || previous.aliases[k] !== v));
  const dropAliases = Object.keys(previous.aliases).filter((k) => !Object.hasOwn(next.aliases, k));
  const delta: FrontierDelta = { from: previous.flushSeq, flushSeq: next.flushSeq, lastFlushAt: next.lastFlushAt };
  if (stubbed.add.length) delta.addStubbed = stubbed.add;
  if (stubbed.drop.length) delta.dropStubbed = stubbed.drop;
  if (Object.keys(setAliases).length) delta.setAliases = setAliases;
  if (dropAliases.length) delta.dropAliases = dropAliases;
  if (purged.add.length) delta.addPurged = purged.add;
  if (purged.drop.length) delta.dropPurged = purged.drop;
  if (chains.add.length) delta.addChains = chains.add;
  if (chains.drop.length) delta.dropChains = chains.drop;
  const thinking = boundaryMove(previous.thinkingStripBoundaryTimestamp, next.thinkingStripBoundaryTimestamp);
  if (thinking !== undefined) delta.thinkingStripBoundaryTimestamp = thinking;
  const frozen = boundaryMove(previous.frozenThroughTimestamp, next.frozenThroughTimestamp);
  if (frozen !== undefined) delta.frozenThroughTimestamp = frozen;
  const seam = boundaryMove(previous.seamThroughTimestamp, next.seamThroughTimestamp);
  if (seam !== undefined) delta.seamThroughTimestamp = seam;
  const fold = foldFrontier(previous);
  return fold.apply(delta) && sameFrontier(fold.frontier(), next) ? delta : undefined;
}

export interface FrontierFold {
  /** `flushSeq` of the frontier folded so far. */
  flushSeq(): number;
  /** Applies `delta` when it follows the frontier folded so far; false (nothing applied) when not. */
  apply(delta: FrontierDelta): boolean;
  frontier(): Frontier;
}

const without = <T>(list: T[], drop: readonly string[] | undefined, keyOf: (x: T) => string): T[] => {
  if (!drop?.length) return list;
  const dropped = new Set(drop);
  return list.filter((x) => !dropped.has(keyOf(x)));
};

/** Folds deltas onto `base` in order. Copies `base` once; each delta costs its own size (plus a filter when it drops). */
export function foldFrontier(base: Frontier): FrontierFold {
  let f: Frontier = { ...base, stubbedKeys: [...base.stubbedKeys], purgedErrorKeys: [...base.purgedErrorKeys], compressedChains: [...base.compressedChains], aliases: { ...base.aliases } };
  return {
    flushSeq: () => f.flushSeq,
    apply(d) {
      if (d.from !== f.flushSeq) return false;
      const stubbedKeys = without(f.stubbedKeys, d.dropStubbed, String);
      const purgedErrorKeys = without(f.purgedErrorKeys, d.dropPurged, String);
      const compressedChains = without(f.compressedChains, d.dropChains, chainKeyOf);
      if (d.addStubbed) stubbedKeys.push(...d.addStubbed);
      if (d.addPurged) purgedErrorKeys.push(...d.addPurged);
      if (d.addChains) compressedChains.push(...d.addChains);
      for (const k of d.dropAliases ?? []) delete f.aliases[k];
      if (d.setAliases) Object.assign(f.aliases, d.setAliases);
      f = { ...f, flushSeq: d.flushSeq, lastFlushAt: d.lastFlushAt, stubbedKeys, purgedErrorKeys, compressedChains };
      for (const field of ["thinkingStripBoundaryTimestamp", "frozenThroughTimestamp", "seamThroughTimestamp"] as const) {
        const moved = d[field];
        if (moved === null) delete f[field];
        else if (moved !== undefined) f[field] = moved;
      }
      return true;
    },
    frontier: () => ({ ...f, stubbedKeys: [...f.stubbedKeys], purgedErrorKeys: [...f.purgedErrorKeys], compressedChains: [...f.compressedChains], aliases: { ...f.aliases } }),
  };
}

export type FrontierPart = { frontier: Frontier } | { frontierDelta: FrontierDelta };

export const checkpointChain = (checkpoint: Frontier): FrontierChain => ({ checkpointBytes: JSON.stringify(checkpoint).length, deltas: 0, deltaBytes: 0 });

/** One flush's frontier part (delta, or a checkpoint when due) and the chain after it. */
export function frontierPart(input: { previous: Frontier; next: Frontier; chain: FrontierChain | undefined; policy?: CheckpointPolicy }): { part: FrontierPart; chain: FrontierChain } {
  const { previous, next, chain } = input;
  const policy = input.policy ?? CHECKPOINT_POLICY;
  const checkpoint = () => ({ part: { frontier: next }, chain: checkpointChain(next) });
  if (!chain || chain.checkpointBytes === 0 || chain.deltas + 1 > policy.maxDeltas) return checkpoint();
  const delta = frontierDelta(previous, next);
  if (!delta) return checkpoint();
  const bytes = JSON.stringify(delta).length;
  if (chain.deltaBytes + bytes > policy.chainRatio * chain.checkpointBytes) return checkpoint();
  return { part: { frontierDelta: delta }, chain: { ...chain, deltas: chain.deltas + 1, deltaBytes: chain.deltaBytes + bytes } };
}
