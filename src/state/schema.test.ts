import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { decodeWith, encodeWith, flushRecordEntry, frontierEntry, restoreState, statsEntry, summaryEntry } from "./entries.ts";
import { FLUSH_RECORD_VERSION, FrontierSchema, emptyFrontier, emptyState } from "./schema.ts";
import { fullFrontier, fullRecord, fullStats } from "../../test/support/state/fixtures.ts";

/** What Pi writes and reads back: a JSON line. */
function throughJson<T>(x: T): T {
  return JSON.parse(JSON.stringify(x));
}

describe("round trip through entries and JSON", () => {
  test("every frontier, summary and stats field survives", () => {
    const entries = [frontierEntry(fullFrontier), summaryEntry(fullRecord), statsEntry(fullStats)].map((e) =>
      throughJson({ type: "custom", id: "x", parentId: null, timestamp: "t", ...e }),
    );
    const { state, diagnostics } = restoreState(entries);
    expect(diagnostics).toEqual([]);
    expect(state.frontier).toEqual(fullFrontier);
    expect(state.summaries).toEqual({ [fullRecord.batchKey]: fullRecord });
    expect(state.stats).toEqual(fullStats);
  });

  test("thinkingStripBoundaryTimestamp: present survives, absent stays absent", () => {
    const withBoundary = restoreState([throughJson({ type: "custom", ...frontierEntry(fullFrontier) })]).state.frontier;
    expect(withBoundary.thinkingStripBoundaryTimestamp).toBe(1_700_000_000_000);
    const without = restoreState([throughJson({ type: "custom", ...frontierEntry(emptyFrontier()) })]).state.frontier;
    expect("thinkingStripBoundaryTimestamp" in without).toBe(false);
  });

  test("adding a field to a schema is all it takes: the same codec carries it", () => {
    const Extended = FrontierSchema.extend({ quantumStep: z.number(), note: z.string().optional() });
    const value = { ...fullFrontier, quantumStep: 64, note: "n" };
    const decoded = decodeWith(Extended, throughJson(encodeWith(Extended, value)));
    expect(decoded).toEqual({ ok: true, value });
  });
});

describe("restoreState", () => {
  test("latest frontier and stats win; summaries accumulate", () => {
    const f2 = { ...fullFrontier, flushSeq: 8, stubbedKeys: ["z@9#0"] };
    const r2 = { ...fullRecord, batchKey: "batch:q@5", summary: { ...fullRecord.summary, batchKey: "batch:q@5" } };
    const entries = [frontierEntry(fullFrontier), summaryEntry(fullRecord), frontierEntry(f2), summaryEntry(r2)].map((e) => ({ type: "custom", ...e }));
    const { state } = restoreState(entries);
    expect(state.frontier).toEqual(f2);
    expect(Object.keys(state.summaries).sort()).toEqual(["batch:a@1", "batch:q@5"]);
    expect(state.stats).toEqual(emptyState().stats);
  });

  test("corrupt and old-format entries are skipped with one diagnostic each; others are ignored", () => {
    const good = { type: "custom", id: "g1", ...frontierEntry(fullFrontier) };
    const entries = [
      { type: "message", message: { role: "user" } },
      { type: "custom", customType: "someone-else", data: { x: 1 } },
      // superseded by the good one after it: never decoded, never reported
      { type: "custom", id: "older", customType: "context-keeper/frontier", data: { ...fullFrontier, stubbedKeys: "nope" } },
      good,
      { type: "custom", id: "old1", customType: "context-keeper/frontier", data: { ...fullFrontier, version: 0 } },
      { type: "custom", id: "bad2", customType: "context-keeper/summary", data: { batchKey: 3 } },
      { type: "custom", id: "bad3", customType: "context-keeper/stats", data: null },
      null,
      "junk",
    ];
    const { state, diagnostics } = restoreState(entries);
    expect(state.frontier).toEqual(fullFrontier);
    expect(state.summaries).toEqual({});
    expect(diagnostics.length).toBe(3);
    const about = (id: string) => diagnostics.find((d) => d.includes(`entry ${id}`));
    expect(about("old1")).toContain("context-keeper/frontier entry old1: format version 0");
    expect(about("bad2")).toBeDefined();
    expect(about("bad3")).toBeDefined();
    expect(about("older")).toBeUndefined();
  });

  test("a corrupt frontier after a good one keeps the good one", () => {
    const entries = [
      { type: "custom", ...frontierEntry(fullFrontier) },
      { type: "custom", customType: "context-keeper/frontier", data: { ...fullFrontier, stubbedKeys: "nope" } },
    ];
    const { state, diagnostics } = restoreState(entries);
    expect(state.frontier).toEqual(fullFrontier);
    expect(diagnostics.length).toBe(1);
  });

  test("encoding an invalid in-memory value throws (a programming error, caught before it is persisted)", () => {
    expect(() => frontierEntry({ ...fullFrontier, flushSeq: -1 })).toThrow();
  });
});

describe("the atomic flush entry", () => {
  const asPi = (e: { customType: string; data: unknown }, id: string) => JSON.parse(JSON.stringify({ type: "custom", id, ...e }));

  test("reads beside the older separate entries, in branch order", () => {
    const f2 = { ...fullFrontier, flushSeq: 8, stubbedKeys: ["z@9#0"] };
    const r2 = { ...fullRecord, batchKey: "batch:q@5", summary: { ...fullRecord.summary, batchKey: "batch:q@5" }, flushSeq: 8 };
    const entries = [
      asPi(summaryEntry(fullRecord), "s1"),
      asPi(frontierEntry(fullFrontier), "f1"),
      asPi(statsEntry(fullStats), "t1"),
      asPi(flushRecordEntry({ version: FLUSH_RECORD_VERSION, summaries: [r2], frontier: f2, stats: { ...fullStats, flushes: 4 } }), "x2"),
    ];
    const { state, diagnostics } = restoreState(entries);
    expect(diagnostics).toEqual([]);
    expect(state.frontier).toEqual(f2);
    expect(Object.keys(state.summaries).sort()).toEqual(["batch:a@1", "batch:q@5"]);
    expect(state.stats.flushes).toBe(4);
  });

  test("one bad part costs only itself; a newer version is skipped whole, saying so", () => {
    const good = flushRecordEntry({ version: FLUSH_RECORD_VERSION, summaries: [fullRecord], frontier: fullFrontier, stats: fullStats });
    const data = JSON.parse(JSON.stringify(good.data));
    data.stats.flushes = -1;
    const partly = restoreState([{ type: "custom", id: "p1", customType: good.customType, data }]);
    expect(partly.state.frontier).toEqual(fullFrontier);
    expect(partly.state.summaries).toEqual({ [fullRecord.batchKey]: fullRecord });
    expect(partly.state.stats).toEqual(emptyState().stats);
    expect(partly.diagnostics).toEqual([expect.stringContaining("skipped context-keeper/flush entry p1 (stats): flushes")]);
    const newer = restoreState([{ type: "custom", id: "n1", customType: good.customType, data: { ...data, version: 3 } }]);
    expect(newer.state).toEqual(emptyState());
    expect(newer.diagnostics).toEqual([expect.stringContaining("format version 3 is not readable by this version (1 or 2)")]);
  });

  test("a version 1 flush entry (a full frontier, written by no flush now) still reads", () => {
    const v1 = { ...flushRecordEntry({ version: 1, summaries: [fullRecord], frontier: fullFrontier, stats: fullStats }) };
    const { state, diagnostics } = restoreState([asPi(v1, "v1")]);
    expect(diagnostics).toEqual([]);
    expect(state.frontier).toEqual(fullFrontier);
    expect(state.stats).toEqual(fullStats);
  });
});
