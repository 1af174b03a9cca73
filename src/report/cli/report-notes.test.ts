import { describe, expect, test } from "bun:test";
import type { ArmReport, SessionReport } from "../session-report.ts";
import { armsBeatingDefaults, beatsDefaultsSentence, calibrationProblems, calibrationWarning, estimatorWarning, recordingNotes } from "./report-notes.ts";

function arm(name: string, ratio: number): ArmReport {
  return {
    name,
    description: `${name} arm`,
    requests: 10,
    billed_input: 1000 * ratio,
    summarizer_cost: 0,
    billed_with_output: 1000 * ratio,
    ratio_to_bare: ratio,
    ratio_to_bare_with_output: ratio,
    hit_ratio: 0.9,
    busts: 1,
    busts_per_prompt: 0.5,
    peak_context_tokens: 1000,
    final_context_tokens: 900,
    read: 900,
    write: 50,
    uncached: 50,
    output: 100,
    flushes: 0,
    rewriting_flushes: 0,
    budget_flushes: 0,
    loop_flushes: 0,
    summarizer_calls: 0,
    compactions: 0,
    compaction_cost: 0,
    usd_compaction: 0,
    usd_input: ratio,
    usd_summarizer: 0,
    usd_total: ratio,
  };
}

function session(o: { file?: string; error?: number; requests?: number; arms?: Record<string, number> }): SessionReport {
  const arms = Object.fromEntries(Object.entries(o.arms ?? { bare: 1, keeper: 0.5 }).map(([n, r]) => [n, arm(n, r)]));
  return {
    file: o.file ?? "s.jsonl",
    requests: o.requests ?? 10,
    user_prompts: 2,
    model: "claude-sonnet-4-5",
    closed_cycle_thinking: "dropped",
    recorded_with: "bare",
    calibration: {
      arm: "bare",
      total_error: o.error ?? 0.01,
      prompt_size_error: 0,
      total_error_ttl_only: 0,
      total_error_cross_validated: null,
      estimator: { source: "fixed", prose_chars_per_token: 3.2, code_chars_per_token: 3.1, block_overhead_tokens: 21, prompt_overhead_tokens: 1565 },
    },
    external_invalidations: 0,
    models: [],
    money: { paid_usd: 1, bare_usd: 1, keeper_usd: 0.5, replayed_paid_usd: 1, saved_usd: 0.5 },
    skipped: { unbilled: 0 },
    diagnostics: [],
    arms,
  };
}

describe("calibration warning", () => {
  test("only replayed sessions above 10% are flagged; the limit itself is not", () => {
    const sessions = [session({ file: "a", error: 0.1 }), session({ file: "b", error: 0.1001 }), session({ file: "c", error: 1.019 }), session({ file: "d", error: 5, requests: 0 })];
    expect(calibrationProblems(sessions).map((p) => p.file)).toEqual(["b", "c"]);
    expect(calibrationProblems(sessions, 0.05).map((p) => p.file)).toEqual(["a", "b", "c"]);
  });

  test("the warning names each file with its error and says what to do; nothing when all is well", () => {
    const text = calibrationWarning(calibrationProblems([session({ file: "big.jsonl", error: 1.019 })]));
    expect(text.startsWith("WARNING:")).toBe(true);
    expect(text).toContain("big.jsonl: calibration error 101.9%");
    expect(text).toContain("--strict");
    expect(calibrationWarning([])).toBe("");
  });
});

describe("estimator warning (a refused per-session fit)", () => {
  test("names the session, the reason and what the fixed constants were used for; nothing for fitted sessions", () => {
    const refused = session({ file: "short.jsonl", error: 0.052 });
    refused.calibration.estimator.note = "4 billed requests; a fit needs 6";
    const fitted = session({ file: "ok.jsonl" });
    fitted.calibration.estimator.source = "per-session";
    const text = estimatorWarning([refused, fitted]);
    expect(text.startsWith("WARNING: the token estimator could not be fitted")).toBe(true);
    expect(text).toContain("  short.jsonl: 4 billed requests; a fit needs 6 (calibration error 5.2% with the fixed constants)");
    expect(text).toContain("counted the tokens of every request there, in\n  every arm");
    expect(text).not.toContain("ok.jsonl");
    expect(estimatorWarning([fitted])).toBe("");
    expect(estimatorWarning([session({ requests: 0 })])).toBe("");
  });
  test("a fitted session with one model family left on the fixed constants is named with that model", () => {
    const mixed = session({ file: "mixed.jsonl" });
    mixed.calibration.estimator.source = "per-session";
    const model = (id: string, estimator: "family fit" | "fixed") => ({ provider: "p", api: "a", model: id, requests: 5, cache_rule: "r", prices: { input: 1, output: 1, cache_read: 0.1, cache_write: 0 }, price_source: "x", total_error: 0, estimator });
    mixed.models = [model("gpt-5.5", "family fit"), model("gemini-2.5-pro", "fixed")];
    expect(estimatorWarning([mixed])).toContain("  mixed.jsonl: gemini-2.5-pro (too few requests or no fit in range for that model family)");
  });
  test("recording notes: one line per model the recording overrode", () => {
    const s = session({ file: "sol.jsonl" });
    s.models = [{ provider: "openai", api: "openai-responses", model: "gpt-6-sol", requests: 9, cache_rule: "r", prices: { input: 2, output: 10, cache_read: 0.2, cache_write: 2.5 }, price_source: "pi-ai registry", total_error: 0.01, estimator: "family fit", note: "gpt-6-sol: no writes" }];
    expect(recordingNotes([s, session({})])).toEqual(["note: sol.jsonl: gpt-6-sol: no writes"]);
  });
});

describe("arms that beat the defaults", () => {
  test("lower ratio than keeper, bare excluded, best first", () => {
    const s = session({ arms: { bare: 0.4, keeper: 0.535, "no-seam": 0.51, "no-pruning": 0.9, "thinking-off": 0.45 } });
    expect(armsBeatingDefaults(s).map((a) => a.name)).toEqual(["thinking-off", "no-seam"]);
    const sentence = beatsDefaultsSentence(s);
    expect(sentence).toContain("thinking-off (thinking-off arm) costs 0.450 of bare Pi against 0.535 for the defaults");
    expect(sentence).toContain("also cheaper: no-seam 0.510");
  });

  test("no sentence when the defaults are cheapest, equal, or nothing was replayed", () => {
    expect(beatsDefaultsSentence(session({ arms: { bare: 1, keeper: 0.5, "no-seam": 0.5, "no-pruning": 0.7 } }))).toBe("");
    expect(beatsDefaultsSentence(session({ requests: 0, arms: { bare: 0, keeper: 0.5, "no-seam": 0.1 } }))).toBe("");
    expect(beatsDefaultsSentence(session({ arms: { bare: 1, "no-seam": 0.1 } }))).toBe("");
  });
});
