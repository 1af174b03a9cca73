import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { decodeWith, flushRecordEntry, frontierEntry, restoreState, statsEntry, summaryEntry } from "./entries.ts";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import type { RecallIndex } from "../recall/recall-index.ts";
import { FLUSH_RECORD_VERSION, FlushRecordSchema, type Frontier, type FrontierDelta, type Stats, type SummaryRecord } from "./schema.ts";

// Keys are occurrence / batch keys (`id@ts#n`); a bare `__proto__` can never be one.
const key = fc.stringMatching(/^[A-Za-z_0-9:]{1,10}@[0-9]{1,13}#[0-9]$/);
const num = fc.double({ noNaN: true, noDefaultInfinity: true });
const count = fc.nat();

const chain = fc.record({
  chainKey: key,
  fromTimestamp: num,
  toTimestamp: num,
  firstCallKey: key,
  messageCount: fc.integer({ min: 1, max: 50 }),
  memberKeys: fc.array(key),
  summaryRefs: fc.array(key),
  text: fc.string(),
});

const frontier: fc.Arbitrary<Frontier> = fc.record(
  {
    version: fc.constant(1 as const),
    flushSeq: count,
    lastFlushAt: num,
    stubbedKeys: fc.array(key),
    aliases: fc.dictionary(key, key),
    purgedErrorKeys: fc.array(key),
    compressedChains: fc.array(chain, { maxLength: 3 }),
    thinkingStripBoundaryTimestamp: num,
    frozenThroughTimestamp: num,
    seamThroughTimestamp: num,
  },
  { requiredKeys: ["version", "flushSeq", "lastFlushAt", "stubbedKeys", "aliases", "purgedErrorKeys", "compressedChains"] },
);

const record: fc.Arbitrary<SummaryRecord> = fc.record({
  version: fc.constant(1 as const),
  batchKey: key,
  summary: fc.record({ batchKey: key, text: fc.string(), source: fc.constantFrom("model", "extractive", "raw"), inputTokens: num, outputTokens: num, cost: num }),
  coveredKeys: fc.array(key),
  outputHashes: fc.dictionary(key, key),
  flushSeq: count,
});

const stats: fc.Arbitrary<Stats> = fc.record({
  version: fc.constant(1 as const),
  flushes: count,
  rewritesCaused: count,
  stubbedResults: count,
  purgedErrors: count,
  compressedChains: count,
  tokensSavedEstimate: num,
  summarizerInputTokens: num,
  summarizerOutputTokens: num,
  summarizerCost: num,
});

const asPiEntry = (e: { customType: string; data: unknown }) => JSON.parse(JSON.stringify({ type: "custom", id: "e", parentId: null, timestamp: "t", ...e }));

describe("persisted state round-trips through Pi custom entries (JSON)", () => {
  test("frontier, summaries and stats: parse(serialize(x)) deep-equals x", () => {
    fc.assert(
      fc.property(frontier, record, stats, (f, r, s) => {
        // JSON has no -0: normalise the expectation the same way JSON does
        const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
        const { state, diagnostics } = restoreState([frontierEntry(f), summaryEntry(r), statsEntry(s)].map(asPiEntry));
        expect(diagnostics).toEqual([]);
        expect(state.frontier).toEqual(json(f));
        expect(state.summaries[r.batchKey]).toEqual(json(r));
        expect(state.stats).toEqual(json(s));
      }),
      { numRuns: 200 },
    );
  });

  const recallEntry = fc.record({
    toolCallId: fc.stringMatching(/^[A-Za-z_0-9]{1,8}$/),
    ts: fc.integer({ min: 0, max: 2 ** 40 }),
    toolName: fc.string(),
    isError: fc.boolean(),
    bytes: count,
    chars: count,
    sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
    spill: fc.option(fc.record({ spillPath: fc.string(), preview: fc.string() }), { nil: undefined }),
  });

  test("the flush entry with a checkpoint carries the same state and recall as the separate entries, every field", () => {
    fc.assert(
      fc.property(frontier, fc.array(record, { maxLength: 3 }), stats, fc.array(recallEntry, { maxLength: 3 }), (f, rs, s, recs) => {
        const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
        const recall: RecallIndex = { version: 1, entries: {} };
        for (const r of recs) {
          const key = `${r.toolCallId}@${r.ts}#0`;
          recall.entries[key] = { occurrenceKey: key, toolCallId: r.toolCallId, toolName: r.toolName, timestamp: r.ts + 1, assistantTimestamp: r.ts, isError: r.isError, bytes: r.bytes, chars: r.chars, sha256: r.sha256, ...r.spill };
        }
        const separate = [...rs.map(summaryEntry), frontierEntry(f), statsEntry(s)];
        const atomic = flushRecordEntry({ version: FLUSH_RECORD_VERSION, summaries: rs, frontier: f, stats: s, recall });
        const fromAtomic = restoreState([atomic].map(asPiEntry));
        const fromSeparate = restoreState(separate.map(asPiEntry));
        expect(fromAtomic.diagnostics).toEqual([]);
        expect(fromAtomic.state).toEqual(fromSeparate.state);
        expect(fromAtomic.state.frontier).toEqual(json(f));
        expect(fromAtomic.state.stats).toEqual(json(s));
        const recalled = restoreRecallIndex([atomic].map(asPiEntry));
        expect(recalled.diagnostics).toEqual([]);
        expect(recalled.index).toEqual(json(recall));
      }),
      { numRuns: 150 },
    );
  });

  const boundary = fc.option(num, { nil: null });
  const delta: fc.Arbitrary<FrontierDelta> = fc.record(
    {
      from: count,
      flushSeq: count,
      lastFlushAt: num,
      addStubbed: fc.array(key),
      dropStubbed: fc.array(key),
      setAliases: fc.dictionary(key, key),
      dropAliases: fc.array(key),
      addPurged: fc.array(key),
      dropPurged: fc.array(key),
      addChains: fc.array(chain, { maxLength: 2 }),
      dropChains: fc.array(key),
      thinkingStripBoundaryTimestamp: boundary,
      frozenThroughTimestamp: boundary,
    },
    { requiredKeys: ["from", "flushSeq", "lastFlushAt"] },
  );

  test("a flush entry with a frontier delta: parse(serialize(x)) deep-equals x, every field", () => {
    fc.assert(
      fc.property(delta, fc.array(record, { maxLength: 2 }), fc.option(stats, { nil: undefined }), (d, rs, s) => {
        const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
        const entry = flushRecordEntry({ version: FLUSH_RECORD_VERSION, summaries: rs, frontierDelta: d, ...(s ? { stats: s } : {}) });
        const decoded = decodeWith(FlushRecordSchema, json(entry.data));
        expect(decoded).toEqual({ ok: true, value: json({ version: FLUSH_RECORD_VERSION, summaries: rs, frontierDelta: d, ...(s ? { stats: s } : {}) }) });
      }),
      { numRuns: 200 },
    );
  });
});
