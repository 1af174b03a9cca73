import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { setup, startJob } from "../../test/support/compaction/wiring-setup.ts";
import { budgetFlushHold, type CompactionOutlook, compactionStopsWarming } from "./cooperation.ts";

describe("budgetFlushHold", () => {
  test("no compaction: never held", () => {
    expect(budgetFlushHold({ outlook: undefined, handoffsSeen: 0 })).toEqual({ hold: false });
    expect(budgetFlushHold({ outlook: { job: "none", handoffs: 2 }, handoffsSeen: 2 })).toEqual({ hold: false });
  });

  test("a pending or ready job holds the budget flush (its apply is imminent)", () => {
    expect(budgetFlushHold({ outlook: { job: "pending", handoffs: 0 }, handoffsSeen: 0 })).toEqual({ hold: true, why: "compaction_imminent" });
    expect(budgetFlushHold({ outlook: { job: "ready", handoffs: 0 }, handoffsSeen: 0 })).toEqual({ hold: true, why: "compaction_imminent" });
  });

  test("a new handoff re-bases the budget once, then the flush may fire again", () => {
    const after = budgetFlushHold({ outlook: { job: "none", handoffs: 1 }, handoffsSeen: 0 });
    expect(after).toEqual({ hold: true, why: "compaction_applied", rebaseline: true, handoffs: 1 });
    expect(budgetFlushHold({ outlook: { job: "none", handoffs: 1 }, handoffsSeen: 1 })).toEqual({ hold: false });
  });

  test("inside the start window a job starts at this turn end: held; outside it, or with no window, not", () => {
    const outlook: CompactionOutlook = { job: "none", handoffs: 0, startWindow: { lower: 55_000, upper: 93_616 } };
    expect(budgetFlushHold({ outlook, handoffsSeen: 0, contextTokens: 56_000 })).toEqual({ hold: true, why: "compaction_starting" });
    expect(budgetFlushHold({ outlook, handoffsSeen: 0, contextTokens: 55_000 })).toEqual({ hold: false });
    expect(budgetFlushHold({ outlook, handoffsSeen: 0, contextTokens: 95_000 })).toEqual({ hold: false });
    expect(budgetFlushHold({ outlook, handoffsSeen: 0 })).toEqual({ hold: false });
    expect(budgetFlushHold({ outlook: { job: "none", handoffs: 0 }, handoffsSeen: 0, contextTokens: 56_000 })).toEqual({ hold: false });
  });

  test("property: a budget flush never fires in the turn a handoff is first seen, while a job is pending or ready, nor where one starts", () => {
    const outlook = fc.record(
      { job: fc.constantFrom("none" as const, "pending" as const, "ready" as const), handoffs: fc.nat(5), startWindow: fc.record({ lower: fc.nat(100_000), upper: fc.nat(100_000) }) },
      { requiredKeys: ["job", "handoffs"] },
    );
    fc.assert(
      fc.property(outlook, fc.nat(5), fc.option(fc.nat(120_000), { nil: undefined }), (o: CompactionOutlook, seen, contextTokens) => {
        const h = budgetFlushHold({ outlook: o, handoffsSeen: seen, contextTokens });
        const w = o.startWindow;
        const starting = w !== undefined && contextTokens !== undefined && contextTokens > w.lower && contextTokens <= w.upper;
        expect(h.hold).toBe(o.handoffs !== seen || o.job !== "none" || starting);
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
  test("pending, ready, then handed off (a draft): none, one handoff; the start window of the last turn end", async () => {
    const { host, finish } = setup();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 0 });
    await startJob(host);
    // Window 100k, START_RATIO 0.5, reserve 10k (wiring-setup.ts).
    expect(host.controller.outlook()).toEqual({ job: "pending", handoffs: 0, startWindow: { lower: 50_000, upper: 90_000 } });
    finish(0);
    await flush();
    expect(host.controller.outlook()).toMatchObject({ job: "ready", handoffs: 0 });
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
