import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { fullFrontier } from "../../test/support/state/fixtures.ts";
import { flushEntryOf, restoreState } from "./entries.ts";
import { foldFrontier, frontierDelta, frontierPart } from "./frontier-fold.ts";
import { type CompressedChain, type FlushRecord, type Frontier, type KeeperState, emptyState } from "./schema.ts";

const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const asPi = (entries: ReadonlyArray<{ customType: string; data: unknown }>) => entries.map((e, i) => json({ type: "custom", id: `e${i}`, ...e }));

describe("frontierDelta / foldFrontier", () => {
  test("a flush's additions, drops and boundary moves fold back to the next frontier", () => {
    const next: Frontier = {
      ...fullFrontier,
      flushSeq: 8,
      lastFlushAt: 9,
      stubbedKeys: ["b@2#1", "n@9#0"],
      aliases: { "m@8#0": "n@9#0" },
      purgedErrorKeys: [],
      compressedChains: [],
      frozenThroughTimestamp: 5,
    };
    delete next.thinkingStripBoundaryTimestamp;
    const delta = frontierDelta(fullFrontier, next)!;
    expect(delta).toEqual({
      from: 7,
      flushSeq: 8,
      lastFlushAt: 9,
      addStubbed: ["n@9#0"],
      dropStubbed: ["a@1#0"],
      setAliases: { "m@8#0": "n@9#0" },
      dropAliases: ["c@3#0"],
      dropPurged: ["e@4#0"],
      dropChains: ["chain:batch:a@1"],
      thinkingStripBoundaryTimestamp: null,
      frozenThroughTimestamp: 5,
    });
    const fold = foldFrontier(fullFrontier);
    expect(fold.apply(delta)).toBe(true);
    expect(fold.frontier()).toEqual(next);
    expect(fullFrontier.stubbedKeys).toEqual(["a@1#0", "b@2#1"]); // the base is never mutated
  });

  test("a change a delta cannot say (a reorder, a chain rewritten under its key) has no delta", () => {
    expect(frontierDelta(fullFrontier, { ...fullFrontier, stubbedKeys: ["b@2#1", "a@1#0"] })).toBeUndefined();
    const rewritten = { ...fullFrontier.compressedChains[0]!, text: "other" };
    expect(frontierDelta(fullFrontier, { ...fullFrontier, compressedChains: [rewritten] })).toBeUndefined();
  });

  test("a delta that does not follow the folded frontier is refused and changes nothing", () => {
    const fold = foldFrontier(fullFrontier);
    expect(fold.apply({ from: 6, flushSeq: 8, lastFlushAt: 1, addStubbed: ["x@1#0"] })).toBe(false);
    expect(fold.frontier()).toEqual(fullFrontier);
  });

  test("ten flushes that add, alias, purge, chain and move boundaries: one checkpoint, then nine deltas (no checkpoint due)", () => {
    let state: KeeperState = emptyState();
    const kinds: string[] = [];
    for (let n = 1; n <= 10; n++) {
      const f = state.frontier;
      const stub = key(n);
      const next: Frontier = {
        ...f,
        flushSeq: n,
        lastFlushAt: n,
        stubbedKeys: [...f.stubbedKeys, stub],
        aliases: { ...f.aliases, [`a${n}@1#0`]: stub },
        purgedErrorKeys: [...f.purgedErrorKeys, `e${n}@1#0`],
        compressedChains: [...f.compressedChains, chainOf(n, [stub])],
        thinkingStripBoundaryTimestamp: n,
        frozenThroughTimestamp: n,
      };
      const persisted = flushEntryOf({ previous: state, frontier: next, summaries: [], policy: { maxDeltas: 64, chainRatio: 100 } });
      const record = persisted.entry.data as FlushRecord;
      kinds.push(record.frontier ? "checkpoint" : "delta");
      state = { ...state, frontier: next, frontierChain: persisted.chain };
    }
    expect(kinds).toEqual(["checkpoint", ...Array(9).fill("delta")]);
  });

  test("checkpoints: the first flush, then when the deltas would pass maxDeltas or chainRatio × the checkpoint", () => {
    const f1 = { ...fullFrontier, flushSeq: 8, stubbedKeys: [...fullFrontier.stubbedKeys, "n@9#0"] };
    expect("frontier" in frontierPart({ previous: fullFrontier, next: f1, chain: undefined }).part).toBe(true);
    const chain = { checkpointBytes: 1000, deltas: 0, deltaBytes: 0 };
    expect("frontierDelta" in frontierPart({ previous: fullFrontier, next: f1, chain }).part).toBe(true);
    expect("frontier" in frontierPart({ previous: fullFrontier, next: f1, chain: { ...chain, deltas: 2 }, policy: { maxDeltas: 2, chainRatio: 1 } }).part).toBe(true);
    expect("frontier" in frontierPart({ previous: fullFrontier, next: f1, chain: { ...chain, deltaBytes: 990 }, policy: { maxDeltas: 99, chainRatio: 1 } }).part).toBe(true);
    const written = frontierPart({ previous: fullFrontier, next: f1, chain });
    expect(written.chain).toEqual({ checkpointBytes: 1000, deltas: 1, deltaBytes: JSON.stringify((written.part as { frontierDelta: unknown }).frontierDelta).length });
  });
});

// ---- property: generated flush sequences on a session tree (branch switches), restored at every node ----

const key = (n: number) => `t${n}@${1000 + n}#0`;
const chainOf = (n: number, members: string[]): CompressedChain => ({
  chainKey: `chain:batch:${key(n)}`,
  fromTimestamp: n,
  toTimestamp: n + 1,
  firstCallKey: members[0] ?? key(n),
  messageCount: 2,
  memberKeys: members,
  summaryRefs: [`batch:${key(n)}`],
  text: `chain ${n}`,
});

/** One step on the current branch: a flush (stubs, aliases, purges, a chain, boundary moves), a compaction drop, or a move back up the tree. */
const step = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("flush" as const),
      stubs: fc.integer({ min: 0, max: 4 }),
      alias: fc.boolean(),
      purge: fc.boolean(),
      chain: fc.boolean(),
      thinking: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      clearThinking: fc.boolean(),
      frozen: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      seam: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      now: fc.integer({ min: 0, max: 1e6 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("compact" as const), keep: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tree" as const), back: fc.integer({ min: 1, max: 5 }) }) },
);

interface Node {
  entries: Array<{ customType: string; data: unknown }>;
  state: KeeperState;
  /** Keys a compaction removed from this branch's context (restore drops them too). */
  dead: Set<string>;
}

const dropDead = (f: Frontier, dead: ReadonlySet<string>): Frontier => ({
  ...f,
  stubbedKeys: f.stubbedKeys.filter((k) => !dead.has(k)),
  purgedErrorKeys: f.purgedErrorKeys.filter((k) => !dead.has(k)),
  compressedChains: f.compressedChains.filter((c) => c.memberKeys.some((k) => !dead.has(k))),
  aliases: Object.fromEntries(Object.entries(f.aliases).filter(([k]) => !dead.has(k))),
});

describe("property: folding a branch's flush entries gives the frontier in memory after every flush", () => {
  test("with checkpoints due often, compactions and /tree moves", () => {
    // A delta that fails its own fold falls back to a checkpoint (still correct): count that deltas are written at all.
    const written = { deltas: 0, checkpoints: 0 };
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 5 }), fc.constantFrom(0.5, 1, 4), (steps, maxDeltas, chainRatio) => {
        let fresh = 0;
        const path: Node[] = [{ entries: [], state: emptyState(), dead: new Set() }];
        for (const s of steps) {
          const here = path.at(-1)!;
          if (s.kind === "tree") {
            // `/tree` back up the branch: the state there is what restore rebuilds from its entries.
            path.splice(Math.max(1, path.length - s.back));
            const back = path.at(-1)!;
            const restored = restoreState(asPi(back.entries));
            expect(restored.diagnostics).toEqual([]);
            path.push({ ...back, state: { ...restored.state, frontier: dropDead(restored.state.frontier, back.dead) } });
            continue;
          }
          if (s.kind === "compact") {
            const f = here.state.frontier;
            const dead = new Set(here.dead);
            for (const k of f.stubbedKeys.slice(0, s.keep)) dead.add(k);
            for (const k of f.purgedErrorKeys.slice(0, s.keep)) dead.add(k);
            path.push({ ...here, dead, state: { ...here.state, frontier: dropDead(f, dead) } });
            continue;
          }
          const f = here.state.frontier;
          const stubs = Array.from({ length: s.stubs }, () => key(++fresh));
          const next: Frontier = {
            ...f,
            flushSeq: f.flushSeq + 1,
            lastFlushAt: s.now,
            stubbedKeys: [...f.stubbedKeys, ...stubs],
            aliases: s.alias && stubs.length > 0 ? { ...f.aliases, [key(++fresh)]: stubs[0]! } : f.aliases,
            purgedErrorKeys: s.purge ? [...f.purgedErrorKeys, key(++fresh)] : f.purgedErrorKeys,
            compressedChains: s.chain && stubs.length > 0 ? [...f.compressedChains, chainOf(++fresh, stubs)] : f.compressedChains,
          };
          if (s.thinking !== undefined) next.thinkingStripBoundaryTimestamp = s.thinking;
          else if (s.clearThinking) delete next.thinkingStripBoundaryTimestamp;
          if (s.frozen !== undefined) next.frozenThroughTimestamp = s.frozen;
          if (s.seam !== undefined) next.seamThroughTimestamp = s.seam;
          const persisted = flushEntryOf({ previous: here.state, frontier: next, summaries: [], policy: { maxDeltas, chainRatio } });
          const state = { ...here.state, frontier: next, frontierChain: persisted.chain };
          const entries = [...here.entries, persisted.entry];
          path.push({ entries, state, dead: here.dead });
          // Restore of this branch: the in-memory frontier exactly (after dropping what compaction removed), and the same chain.
          const restored = restoreState(asPi(entries));
          expect(restored.diagnostics).toEqual([]);
          expect(dropDead(restored.state.frontier, here.dead)).toEqual(json(next));
          expect(restored.state.frontierChain).toEqual(persisted.chain);
          const record = persisted.entry.data as FlushRecord;
          expect(record.frontier === undefined).toBe(record.frontierDelta !== undefined);
          if (record.frontierDelta) written.deltas++;
          else written.checkpoints++;
        }
      }),
      { numRuns: 300 },
    );
    expect(written.deltas).toBeGreaterThan(0);
  });
});
