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

  test("property: a budget flush never fires in the turn a handoff is first seen, nor while a job is pending or ready", () => {
    const outlook = fc.record({ job: fc.constantFrom("none" as const, "pending" as const, "ready" as const), handoffs: fc.nat(5) });
    fc.assert(
      fc.property(outlook, fc.nat(5), (o: CompactionOutlook, seen) => {
        const h = budgetFlushHold({ outlook: o, handoffsSeen: seen });
        if (o.handoffs !== seen || o.job !== "none") expect(h.hold).toBe(true);
        else expect(h.hold).toBe(false);
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
  test("pending, ready, then handed off (a draft): none, one handoff", async () => {
    const { host, finish } = setup();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 0 });
    await startJob(host);
    expect(host.controller.outlook()).toEqual({ job: "pending", handoffs: 0 });
    finish(0);
    await flush();
    expect(host.controller.outlook()).toEqual({ job: "ready", handoffs: 0 });
    await host.turnEnd();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 1 });
    await host.fire("agent_end", { messages: [] });
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 1 });
  });
});
