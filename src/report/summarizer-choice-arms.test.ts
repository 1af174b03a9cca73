/**
 * Summaries in the replay on a short session: the keeper's default never pays a summarizer (it
 * is `extractive`; `auto` would not either — the horizon stays below the break-even), while
 * `summarizer-model` (always ask) pays one and ends up costlier than the default.
 */
import { describe, expect, test } from "bun:test";
import { selectArms } from "./arms.ts";
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import { reportSession } from "./session-report.ts";
import { syntheticSession } from "../../test/support/report/arms-fixtures.ts";

describe("auto summaries on 8 prompts × 6 reads of ~3 KB (Opus 4.5, thinking)", () => {
  const text = syntheticSession({ prompts: 8, callsPerPrompt: 6, outputChars: 3000, thinking: true, model: "claude-opus-4-5" });
  const run = reportSession({ file: "short.jsonl", text, arms: selectArms("summarizer-model").arms, summaries: "size-model" });
  const { bare, keeper } = run.report.arms;
  const always = run.report.arms["summarizer-model"];

  test("the keeper arm costs no more than bare Pi, summarizer included", () => {
    expect(keeper.ratio_to_bare).toBeLessThanOrEqual(1);
    expect(keeper.billed_input + keeper.summarizer_cost).toBeLessThanOrEqual(bare.billed_input);
  });

  test("no model call: the horizon never reaches the break-even", () => {
    // Each read returns 75 lines of ~28 characters (≈ 2.17k chars): R = 699, S = round(120 + 27.96) = 148,
    // prompt overhead P = 250: C = 699 + 250 + 5 × 148 = 1689; per request (699 − 148) × 0.1 = 55.1;
    // break-even N = 1689 / 55.1 ≈ 30.7. The last flush has seen 49 requests ~10 s apart:
    // q = 49/50, F = 30, N = 1 + 49 × (1 − 0.98^30) ≈ 23.3 < 30.7 (and N < 31 whatever the session).
    const n = estimateRequestHorizon({ requestTimes: Array.from({ length: 49 }, (_, i) => i * 10_500), ttlMs: 300_000 }).expectedRequests;
    expect(n).toBeCloseTo(1 + 49 * (1 - 0.98 ** 30), 9);
    expect(n).toBeLessThan(30.7);
    expect(keeper.summarizer_calls).toBe(0);
    expect(keeper.summarizer_cost).toBe(0);
  });

  test("always asking the model costs more than the default's deterministic summaries", () => {
    expect(always.flushes).toBe(keeper.flushes);
    expect(always.summarizer_calls).toBeGreaterThan(0);
    expect(always.summarizer_cost).toBeGreaterThan(0);
    expect(keeper.ratio_to_bare).toBeLessThan(always.ratio_to_bare);
  });
});
