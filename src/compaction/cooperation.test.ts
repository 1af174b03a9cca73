import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { setup, startJob } from "../../test/support/compaction/wiring-setup.ts";
import { budgetFlushHold, compactionAfterFlush, type CompactionOutlook, compactionStopsWarming, FLUSH_PAYBACK_REQUESTS, requestsUntilCompaction } from "./cooperation.ts";

describe("budgetFlushHold", () => {
  test("no compaction: never held", () => {
    expect(budgetFlushHold({ outlook: undefined, handoffsSeen: 0 })).toEqual({ hold: false });
    expect(budgetFlushHold({ outlook: { job: "none", handoffs: 2 }, handoffsSeen: 2 })).toEqual({ hold: false });
  });

  test("before any turn end worked out where a summary applies, a pending or ready job holds the budget flush", () => {
    expect(budgetFlushHold({ outlook: { job: "pending", handoffs: 0 }, handoffsSeen: 0 })).toEqual({ hold: true, why: "compaction_imminent" });
    expect(budgetFlushHold({ outlook: { job: "ready", handoffs: 0 }, handoffsSeen: 0, contextTokens: 40_000 })).toEqual({ hold: true, why: "compaction_imminent" });
  });

  test("a new handoff re-bases the budget once, then the flush may fire again", () => {
    const after = budgetFlushHold({ outlook: { job: "none", handoffs: 1 }, handoffsSeen: 0 });
    expect(after).toEqual({ hold: true, why: "compaction_applied", rebaseline: true, handoffs: 1 });
    expect(budgetFlushHold({ outlook: { job: "none", handoffs: 1 }, handoffsSeen: 1 })).toEqual({ hold: false });
  });

  test("from the size where a summary applies (Pi's own compaction comes there too) the flush is held; below it a waiting job holds nothing", () => {
    const at = (job: CompactionOutlook["job"], contextTokens?: number) => budgetFlushHold({ outlook: { job, handoffs: 0, applyFrom: 88_800, startWindow: { lower: 36_384, upper: 93_616 } }, handoffsSeen: 0, ...(contextTokens !== undefined ? { contextTokens } : {}) });
    for (const job of ["none", "pending", "ready"] as const) {
      expect(at(job, 88_800)).toEqual({ hold: true, why: "compaction_imminent" });
      expect(at(job, 95_000)).toEqual({ hold: true, why: "compaction_imminent" });
      // A job started (or ready) far below Pi's threshold waits for need: a flush now pays as with no job.
      expect(at(job, 50_000)).toEqual({ hold: false });
    }
    // Context size unknown: as before any turn end.
    expect(at("ready")).toEqual({ hold: true, why: "compaction_imminent" });
    expect(at("none")).toEqual({ hold: false });
  });

  test("with too few turns left before the compaction for a rewrite to pay back, the flush is held too", () => {
    const at = (contextTokens: number) => budgetFlushHold({ outlook: { job: "none", handoffs: 0, applyFrom: 88_800, growthPerTurn: 4_000 }, handoffsSeen: 0, contextTokens });
    expect(at(88_800 - FLUSH_PAYBACK_REQUESTS * 4_000)).toEqual({ hold: true, why: "compaction_imminent" });
    expect(at(88_800 - FLUSH_PAYBACK_REQUESTS * 4_000 - 1)).toEqual({ hold: false });
  });

  test("property: a budget flush never fires in the turn a handoff is first seen, nor where a compaction applies", () => {
    const outlook = fc.record(
      { job: fc.constantFrom("none" as const, "pending" as const, "ready" as const), handoffs: fc.nat(5), applyFrom: fc.nat(100_000), growthPerTurn: fc.nat(10_000), startWindow: fc.record({ lower: fc.nat(100_000), upper: fc.nat(100_000) }) },
      { requiredKeys: ["job", "handoffs"] },
    );
    fc.assert(
      fc.property(outlook, fc.nat(5), fc.option(fc.nat(120_000), { nil: undefined }), (o: CompactionOutlook, seen, contextTokens) => {
        const h = budgetFlushHold({ outlook: o, handoffsSeen: seen, contextTokens });
        const left = requestsUntilCompaction(o, contextTokens);
        const imminent = o.applyFrom !== undefined && contextTokens !== undefined ? contextTokens >= o.applyFrom || (left !== undefined && left <= FLUSH_PAYBACK_REQUESTS) : o.job !== "none";
        expect(h.hold).toBe(o.handoffs !== seen || imminent);
      }),
    );
  });
});

describe("compactionAfterFlush", () => {
  // Applies from 100k; the context grows 10k a turn (large early reads).
  const o: CompactionOutlook = { job: "none", handoffs: 0, applyFrom: 100_000, growthPerTurn: 10_000 };

  test("a flush that takes the context far below the apply point pushes the compaction beyond its payback", () => {
    expect(budgetFlushHold({ outlook: o, handoffsSeen: 0, contextTokens: 44_000 })).toEqual({ hold: true, why: "compaction_imminent" });
    expect(compactionAfterFlush(o, 44_000, 0)).toEqual({ imminent: true, requestsLeft: 6 });
    // 38k pruned leaves 6k: 10 turns of growth to go... still within the 12 a rewrite needs.
    expect(compactionAfterFlush(o, 44_000, 38_000)).toEqual({ imminent: true, requestsLeft: 10 });
    const slow: CompactionOutlook = { ...o, growthPerTurn: 5_000 };
    expect(compactionAfterFlush(slow, 44_000, 0).imminent).toBe(true);
    expect(compactionAfterFlush(slow, 44_000, 38_000)).toEqual({ imminent: false, requestsLeft: 19 });
  });

  test("from the apply point on, a flush that leaves the context there stays held; one below it does not", () => {
    expect(compactionAfterFlush({ ...o, growthPerTurn: undefined }, 104_000, 2_000).imminent).toBe(true);
    expect(compactionAfterFlush({ ...o, growthPerTurn: undefined }, 104_000, 10_000).imminent).toBe(false);
  });

  test("a job with no apply point known yet holds whatever the flush removes; nothing foreseen holds nothing", () => {
    expect(compactionAfterFlush({ job: "pending", handoffs: 0 }, 44_000, 40_000).imminent).toBe(true);
    expect(compactionAfterFlush({ job: "none", handoffs: 2 }, 44_000, 0)).toEqual({ imminent: false, requestsLeft: undefined });
  });

  test("property: never more imminent, never fewer requests left, the more a flush removes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 200_000 }), (t, g, a, b) => {
        const out = { ...o, growthPerTurn: g };
        const less = compactionAfterFlush(out, t, Math.min(a, b));
        const more = compactionAfterFlush(out, t, Math.max(a, b));
        expect(more.imminent && !less.imminent).toBe(false);
        expect(more.requestsLeft!).toBeGreaterThanOrEqual(less.requestsLeft!);
      }),
    );
  });
});

describe("compactionStopsWarming", () => {
  test("stops Pi's warming while a job is pending or ready; never starts it", () => {
    expect(compactionStopsWarming({ job: "pending", handoffs: 0 }, "warm")).toBe(true);
    expect(compactionStopsWarming({ job: "ready", handoffs: 0 }, "warm")).toBe(true);
    expect(compactionStopsWarming({ job: "none", handoffs: 3 }, "warm")).toBe(false);
    expect(compactionStopsWarming({ job: "pending", handoffs: 0 }, "stop")).toBe(false);
    expect(compactionStopsWarming(undefined, "warm")).toBe(false);
  });
});

describe("CompactionController.outlook", () => {
  test("pending, ready, then handed off (a draft): none, one handoff; the start window and the apply point of the last turn end", async () => {
    const { host, finish } = setup();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 0 });
    await startJob(host);
    // Window 100k, START_RATIO 0.5, reserve 10k (wiring-setup.ts); one turn seen: no growth yet, the apply point is Pi's threshold.
    expect(host.controller.outlook()).toEqual({ job: "pending", handoffs: 0, startWindow: { lower: 50_000, upper: 90_000 }, applyFrom: 90_000, growthPerTurn: 0 });
    finish(0);
    await flush();
    expect(host.controller.outlook()).toMatchObject({ job: "ready", handoffs: 0 });
    host.tokens = 64_000; // a turn of 4,000: the apply point moves that far below the threshold
    await host.turnEnd();
    expect(host.controller.outlook()).toMatchObject({ job: "ready", handoffs: 0, applyFrom: 86_000, growthPerTurn: 4_000 });
    host.tokens = 86_000;
    await host.turnEnd();
    expect(host.controller.outlook()).toMatchObject({ job: "none", handoffs: 1 });
    await host.fire("agent_end", { messages: [] });
    expect(host.controller.outlook()).toMatchObject({ job: "none", handoffs: 1 });
  });

  test("a start that cannot happen leaves no window (the budget flush is not held for it)", async () => {
    const { host } = setup();
    host.settings.enabled = false; // Pi's own compaction off: no automatic start
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 0 });
  });
});
