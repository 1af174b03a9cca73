/** Pieces of the CLI output: argument parsing, progress, tables. */
import { describe, expect, test } from "bun:test";
import { parseArgs } from "./cli/args.ts";
import { outDirProblem } from "./cli/locations.ts";
import { createProgress, progressBar } from "./progress.ts";
import type { ArmReport, SessionReport } from "./session-report.ts";
import { compactNumber, moneyLine, sessionTable, totalsOverSessions } from "./table.ts";

describe("arguments", () => {
  test("report with files and options", () => {
    expect(parseArgs(["report", "a.jsonl", "--json", "--out=o", "--arms", "no-pruning", "b.jsonl", "--no-chart"])).toEqual({
      command: "report",
      files: ["a.jsonl", "b.jsonl"],
      json: true,
      out: "o",
      arms: "no-pruning",
      chart: false,
      summaries: "size-model",
      strict: false,
      all: false,
      since: undefined,
    });
    expect(parseArgs(["report", "--strict"])).toMatchObject({ command: "report", strict: true });
    expect(parseArgs(["report", "--all", "--since", "30d", "--json"])).toMatchObject({ command: "report", all: true, since: "30d", json: true, files: [] });
    expect(parseArgs(["report", "--all", "--since=2025-11-01"])).toMatchObject({ all: true, since: "2025-11-01" });
  });
  test("errors and help", () => {
    expect(parseArgs(["report", "--out"]).command).toBe("error");
    expect(parseArgs(["report", "--summaries", "llm"]).command).toBe("error");
    expect(parseArgs(["report", "-x"]).command).toBe("error");
    expect(parseArgs(["report", "--since", "30d"])).toEqual({ command: "error", message: "--since goes with --all (every session in the Pi sessions folder)" });
    expect(parseArgs(["report", "--all", "--since"])).toMatchObject({ command: "error", message: expect.stringContaining("--since needs a value") });
    expect(parseArgs(["report", "--all", "s.jsonl"])).toEqual({ command: "error", message: "--all reports every session in the Pi sessions folder; it takes no files (got s.jsonl)" });
    expect(parseArgs([]).command).toBe("help");
    expect(parseArgs(["report", "--help"]).command).toBe("help");
    for (const v of [["--version"], ["-V"], ["version"], ["report", "a.jsonl", "--version"]]) expect(parseArgs(v).command).toBe("version");
  });
  test("out dir rule", () => {
    expect(outDirProblem("/home/u/.pi/agent/sessions/x", [], "/home/u/.pi/agent/sessions")).toContain("inside");
    expect(outDirProblem("/data", ["/data/s.jsonl"], "/home/u/.pi/agent/sessions")).toContain("directory of the session");
    expect(outDirProblem("/data/report", ["/data/s.jsonl"], "/home/u/.pi/agent/sessions")).toBeUndefined();
  });
});

describe("progress", () => {
  test("plain: one line per 10% step reached, then 100% once", () => {
    const lines: string[] = [];
    const p = createProgress({ write: (t) => lines.push(t), isTTY: false });
    for (let i = 0; i <= 40; i++) p.update(i / 100, "x");
    p.update(0.95, "y");
    p.done();
    expect(lines).toEqual(["progress: 10% x\n", "progress: 20% x\n", "progress: 30% x\n", "progress: 40% x\n", "progress: 90% y\n", "progress: 100%\n"]);
  });
  test("terminal: redraws only on change and clears at the end", () => {
    const out: string[] = [];
    const p = createProgress({ write: (t) => out.push(t), isTTY: true });
    p.update(0.5, "a");
    p.update(0.501, "a");
    p.update(0.51, "a");
    p.done();
    expect(out).toHaveLength(3);
    expect(out[0]).toContain(progressBar(0.5));
    expect(out[2]).toBe("\r\x1b[K");
    expect(progressBar(0.5, 10)).toBe("[#####-----]  50%");
  });
});

const arm = (name: string, o: Partial<ArmReport>): ArmReport => ({
  name,
  description: "",
  requests: 10,
  billed_input: 0,
  summarizer_cost: 0,
  billed_with_output: 0,
  ratio_to_bare: 1,
  ratio_to_bare_with_output: 1,
  hit_ratio: 0,
  busts: 0,
  busts_per_prompt: 0,
  peak_context_tokens: 0,
  final_context_tokens: 0,
  read: 0,
  write: 0,
  uncached: 0,
  output: 0,
  flushes: 0,
  rewriting_flushes: 0,
  budget_flushes: 0,
  loop_flushes: 0,
  summarizer_calls: 0,
  compactions: 0,
  compaction_cost: 0,
  usd_compaction: 0,
  usd_input: 0,
  usd_summarizer: 0,
  usd_total: 0,
  ...o,
});
const session = (prompts: number, arms: ArmReport[]): SessionReport => ({
  file: "f",
  requests: 10,
  user_prompts: prompts,
  model: "m",
  closed_cycle_thinking: "dropped",
  recorded_with: "bare",
  calibration: {
    arm: "bare",
    total_error: 0.01,
    prompt_size_error: 0,
    total_error_ttl_only: 0.05,
    total_error_cross_validated: 0.02,
    estimator: { source: "per-session", prose_chars_per_token: 3.2, code_chars_per_token: 3.1, block_overhead_tokens: 21, prompt_overhead_tokens: 1500 },
  },
  external_invalidations: 0,
  models: [{ provider: "openai", api: "openai-responses", model: "gpt-5.5", requests: 10, cache_rule: "OpenAI: automatic prefix caching", prices: { input: 5, output: 30, cache_read: 0.5, cache_write: 0 }, price_source: "pi-ai registry", total_error: 0.01, estimator: "family fit" }],
  money: { paid_usd: 12.4, bare_usd: 12.5, keeper_usd: 6.25, replayed_paid_usd: 12.5, saved_usd: 12.4 - 6.25 },
  skipped: { unbilled: 0 },
  diagnostics: [],
  arms: Object.fromEntries(arms.map((a) => [a.name, a])),
});

describe("tables", () => {
  test("totals recompute ratios from sums", () => {
    const a = session(4, [arm("bare", { billed_input: 1000, read: 80, write: 10, uncached: 10, peak_context_tokens: 50 }), arm("keeper", { billed_input: 400, summarizer_cost: 100, read: 30, write: 10, uncached: 10, busts: 2, peak_context_tokens: 20 })]);
    const b = session(6, [arm("bare", { billed_input: 3000, read: 90, write: 5, uncached: 5, peak_context_tokens: 70 }), arm("keeper", { billed_input: 2000, summarizer_cost: 0, read: 50, write: 25, uncached: 25, busts: 3, peak_context_tokens: 60 })]);
    const t = totalsOverSessions([a, b]);
    // keeper: (400 + 100 + 2000 + 0) / (1000 + 3000) = 0.625; hit = 80 / 150; busts 5 over 10 prompts
    expect(t.keeper.ratio_to_bare).toBeCloseTo(0.625, 12);
    expect(t.keeper.hit_ratio).toBeCloseTo(80 / 150, 12);
    expect(t.keeper.busts_per_prompt).toBeCloseTo(0.5, 12);
    expect(t.keeper.peak_context_tokens).toBe(60);
    expect(t.bare.ratio_to_bare).toBe(1);
    expect(totalsOverSessions([session(1, [arm("bare", { usd_total: 1.5 })]), session(1, [arm("bare", { usd_total: 2 })])]).bare.usd_total).toBe(3.5);
  });
  test("a session table has a row per arm and the calibration error as a percentage", () => {
    const s = sessionTable(session(4, [arm("bare", {}), arm("keeper", { ratio_to_bare: 0.5123 })]));
    expect(s).toContain("calibration error 1.0% (the replay vs the recorded cache usage, in-sample: estimator fitted to this session)");
    expect(s).toContain("2.0% cross-validated");
    expect(s).toContain("5.0% with TTL expiry as the only invalidation");
    expect(s).toContain("you paid $12.40; with the keeper ≈ $6.25 (≈ $6.15 saved, 50%); the replay of what you paid: $12.50");
    expect(s).toContain("gpt-5.5 (10 req; OpenAI: automatic prefix caching; $5/$30 in/out, read $0.5 per M, pi-ai registry)");
    expect(s).toMatch(/^keeper\s.*0\.512/m);
    expect(s).not.toContain("reasoning dropped");
    const dropped = sessionTable({ ...session(4, [arm("bare", {})]), reasoning_dropped: { requests: 31, blocks: 4, reasons: ["prefix_mismatch"] } });
    expect(dropped).toContain("reasoning dropped by the provider (recorded): 4 thinking blocks on 31 requests (prefix_mismatch)");
    expect(compactNumber(1_234_567)).toBe("1.23M");
    expect(compactNumber(45_678)).toBe("45.7k");
  });
});

describe("money line", () => {
  test("a keeper recording: what was paid, and bare Pi as the counterfactual", () => {
    const money = { paid_usd: 0.6, bare_usd: 0.9, keeper_usd: 0.61, replayed_paid_usd: 0.61, saved_usd: 0.3 };
    expect(moneyLine({ recorded_with: "keeper", money })).toBe("you paid $0.60 (recorded with the keeper); without the keeper ≈ $0.90 (≈ $0.30 saved, 33%)");
  });
  test("a recording of bare Pi: what was paid, and the keeper as the counterfactual; a loss says so", () => {
    expect(moneyLine({ recorded_with: "bare", money: { paid_usd: 1, bare_usd: 1.01, keeper_usd: 0.6, replayed_paid_usd: 1.01, saved_usd: 0.4 } })).toBe("you paid $1.00; with the keeper ≈ $0.60 (≈ $0.40 saved, 40%)");
    expect(moneyLine({ recorded_with: "bare", money: { paid_usd: 1, bare_usd: 1, keeper_usd: 1.2, replayed_paid_usd: 1, saved_usd: -0.2 } })).toBe("you paid $1.00; with the keeper ≈ $1.20 (≈ $0.20 more)");
    expect(moneyLine({ recorded_with: "bare", money: { paid_usd: 1, bare_usd: 1, keeper_usd: null, replayed_paid_usd: 1, saved_usd: null } })).toBe("you paid $1.00");
  });
});
