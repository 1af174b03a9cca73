/**
 * The budget trigger at a turn end, with async compaction's outlook: held where a compaction
 * applies (from `applyFrom`, or while a job is pending or ready before that is known),
 * re-based on the compacted context after a handoff, unchanged without compaction.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { CompactionOutlook } from "../compaction/cooperation.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { budgetThreshold } from "../flush/budget-trigger.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { type BudgetBase, budgetStep, budgetTriggerFires } from "./triggers.ts";

const WINDOW = 200_000;
/** The context size at which the budget rule fires from a base far below it. */
const BUDGET = budgetThreshold(DEFAULT_SETTINGS.pruning.budgetTrigger, WINDOW);
const base: BudgetBase = { tokensAtLastFlush: 10_000, handoffsSeen: 0 };
const step = (contextTokens: number, compaction: CompactionOutlook | undefined, from: BudgetBase = base) =>
  budgetStep({ settings: DEFAULT_SETTINGS, contextTokens, contextWindow: WINDOW, base: from, compaction });

describe("budgetStep", () => {
  test("without compaction it is the plain budget rule and keeps its base", () => {
    expect(step(BUDGET, undefined)).toEqual({ fire: true, base, held: false });
    expect(step(BUDGET - 1, undefined)).toEqual({ fire: false, base, held: false });
    expect(step(BUDGET, { job: "none", handoffs: 0 })).toEqual({ fire: true, base, held: false });
  });

  test("a pending or ready job holds the flush past the budget, base unchanged", () => {
    expect(step(10_000 + 2 * BUDGET, { job: "pending", handoffs: 0 })).toEqual({ fire: false, base, held: true, why: "compaction_imminent" });
    expect(step(10_000 + 2 * BUDGET, { job: "ready", handoffs: 0 })).toEqual({ fire: false, base, held: true, why: "compaction_imminent" });
  });

  test("where a compaction applies (applyFrom) the flush is held whatever the job; below it a waiting job holds nothing", () => {
    for (const job of ["none", "pending", "ready"] as const) {
      expect(step(BUDGET, { job, handoffs: 0, applyFrom: BUDGET })).toEqual({ fire: false, base, held: true, why: "compaction_imminent" });
      expect(step(BUDGET, { job, handoffs: 0, applyFrom: BUDGET + 1 })).toEqual({ fire: true, base, held: false });
    }
  });

  test("a new handoff re-bases on the compacted context and skips that turn; the count then runs from there", () => {
    const after = step(30_000, { job: "none", handoffs: 1 });
    expect(after).toEqual({ fire: false, base: { tokensAtLastFlush: 30_000, handoffsSeen: 1 }, held: true, why: "compaction_applied" });
    expect(step(BUDGET - 1, { job: "none", handoffs: 1 }, after.base).fire).toBe(false);
    expect(step(BUDGET, { job: "none", handoffs: 1 }, after.base).fire).toBe(true);
  });

  test("property: it fires only below where a compaction applies (or with no job, before that is known), with no unseen handoff, when the plain rule fires", () => {
    const outlook = fc.option(
      fc.record({ job: fc.constantFrom("none" as const, "pending" as const, "ready" as const), handoffs: fc.nat(3), applyFrom: fc.nat(400_000) }, { requiredKeys: ["job", "handoffs"] }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(fc.nat(400_000), fc.nat(400_000), fc.nat(3), outlook, (tokens, last, seen, o) => {
        const from = { tokensAtLastFlush: last, handoffsSeen: seen };
        const out = step(tokens, o, from);
        const plain = budgetTriggerFires({ settings: DEFAULT_SETTINGS, contextTokens: tokens, tokensAtLastFlush: last, contextWindow: WINDOW });
        const below = o === undefined || (o.applyFrom !== undefined ? tokens < o.applyFrom : o.job === "none");
        const clear = o === undefined || (below && o.handoffs === seen);
        expect(out.fire).toBe(clear && plain);
        if (o !== undefined && o.handoffs !== seen) expect(out.base).toEqual({ tokensAtLastFlush: tokens, handoffsSeen: o.handoffs });
        else expect(out.base).toEqual(from);
      }),
    );
  });
});

const live = (settings: KeeperSettings = DEFAULT_SETTINGS, contextTokens = 100_000, tokensAtLastFlush = 0) =>
  budgetTriggerFires({ settings, contextTokens, tokensAtLastFlush, contextWindow: 200_000 });

describe("the engine's budget rule", () => {
  test("defaults are the headroom trigger: half the 200k window, capped at 150k", () => {
    expect(DEFAULT_SETTINGS.pruning.budgetTrigger).toEqual({ enabled: true, fraction: 0.5, maxTokens: 150_000 });
    expect(live()).toBe(true);
    expect(live(DEFAULT_SETTINGS, 60_000)).toBe(false);
  });

  test("after a flush it needs a quarter of the threshold of growth (the shared leaf rule)", () => {
    expect(live(DEFAULT_SETTINGS, 120_000, 100_000)).toBe(false);
    expect(live(DEFAULT_SETTINGS, 125_000, 100_000)).toBe(true);
  });

  test("master switch, pruning or the trigger off never fires", () => {
    expect(live({ ...DEFAULT_SETTINGS, enabled: false })).toBe(false);
    expect(live({ ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, enabled: false } })).toBe(false);
    const off = { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false };
    expect(live({ ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: off } }, 500_000)).toBe(false);
  });
});
