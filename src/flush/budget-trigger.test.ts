import { describe, expect, test } from "bun:test";
import { budgetThreshold, budgetTriggerFiresFor } from "./budget-trigger.ts";

const trigger = { enabled: true, fraction: 0.5, maxTokens: 150_000 };
const fires = (contextTokens: number, tokensAtLastFlush: number, contextWindow = 200_000, t = trigger) =>
  budgetTriggerFiresFor({ trigger: t, contextTokens, tokensAtLastFlush, contextWindow });

describe("budget trigger: tied to window headroom", () => {
  test("threshold = min(fraction × window, maxTokens)", () => {
    expect(budgetThreshold(trigger, 200_000)).toBe(100_000);
    expect(budgetThreshold(trigger, 1_000_000)).toBe(150_000);
  });

  test("growth alone does not fire: 60k added in a 200k window stays below the threshold", () => {
    expect(fires(60_000, 0)).toBe(false);
    expect(fires(99_999, 0)).toBe(false);
    expect(fires(100_000, 0)).toBe(true);
  });

  test("after a flush it waits for a quarter of the threshold of new growth", () => {
    expect(fires(120_000, 100_000)).toBe(false);
    expect(fires(125_000, 100_000)).toBe(true);
  });

  test("1M windows fire at the cap; off, or a broken window, never fires", () => {
    expect(fires(150_000, 0, 1_000_000)).toBe(true);
    expect(fires(149_999, 0, 1_000_000)).toBe(false);
    expect(fires(500_000, 0, 200_000, { ...trigger, enabled: false })).toBe(false);
    expect(fires(500_000, 0, 0)).toBe(false);
    expect(fires(Number.NaN, 0)).toBe(false);
  });
});
