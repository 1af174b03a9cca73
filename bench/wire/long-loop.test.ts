/**
 * The long-loop benchmark's pure parts: the scenario generator, the OpenAI Responses records read
 * as the measure reads Anthropic's, the provider's weights in the measure, and the table.
 */
import { describe, expect, test } from "bun:test";
import type { WireMessage } from "../../test/support/fake-anthropic/types.ts";
import type { ResponsesRecord } from "../../test/support/fake-openai/types.ts";
import { generateLongLoopScenario } from "../../test/support/long-loop-scenario.ts";
import { formatLongLoopTable, longLoopGoals, longLoopRows, type LongLoopResult } from "./long-loop-table.ts";
import { measureRun } from "./measure.ts";
import { recordedRequest } from "./recorded-request.ts";
import { messagesOfInput, recordOfResponses } from "./responses-record.ts";
import { OPENAI_WEIGHTS } from "./weights.ts";

describe("long-loop scenario", () => {
  const s = generateLongLoopScenario({ seed: 7 });

  test("a few prompts, each a loop of 60–120 tool steps and a final text answer", () => {
    expect(s.prompts).toHaveLength(3);
    for (const steps of s.stepsByPrompt) {
      const tools = steps.slice(0, -1);
      expect(tools.length).toBeGreaterThanOrEqual(60);
      expect(tools.length).toBeLessThanOrEqual(120);
      expect(tools.every((t) => (t.toolCalls ?? []).length > 0 && t.thinking !== undefined)).toBe(true);
      expect(steps.at(-1)!.toolCalls).toBeUndefined();
      expect(steps.at(-1)!.text).toContain("Done with task");
    }
  });

  test("large files are read in each loop's first steps, small outputs after", () => {
    const big = Object.keys(s.files).filter((p) => p.includes("/big-"));
    const named = (c: { input: Record<string, unknown> }) => String(c.input.path ?? c.input.command ?? "");
    for (const steps of s.stepsByPrompt) {
      const first = steps.slice(0, 6).flatMap((t) => t.toolCalls ?? []);
      expect(first.every((c) => big.some((p) => named(c).endsWith(p)))).toBe(true);
    }
    expect(big.every((p) => s.files[p]!.length >= 16_384)).toBe(true);
  });

  test("deterministic by seed", () => {
    expect(generateLongLoopScenario({ seed: 7 }).steps).toEqual(s.steps);
    expect(generateLongLoopScenario({ seed: 8 }).steps).not.toEqual(s.steps);
  });
});

describe("OpenAI Responses records, read as the measure reads Anthropic's", () => {
  const input = [
    { role: "developer", content: "You are Pi." },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Task" }] },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "look" }], encrypted_content: "x" },
    { type: "function_call", call_id: "c1", name: "read", arguments: "{\"path\":\"a.ts\"}" },
    { type: "function_call_output", call_id: "c1", output: "a".repeat(40) },
  ];

  test("instructions left out; a human turn, then thinking and a call, then the result as a user turn", () => {
    const messages = messagesOfInput(input);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect((messages[1]!.content as Array<{ type: string }>).map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((messages[2]!.content as Array<{ type: string; content?: unknown }>)[0]).toMatchObject({ type: "tool_result", tool_use_id: "c1", content: "a".repeat(40) });
  });

  test("usage: the unread part of a cached prompt counts as written at weight 1; a short prompt is plain input", () => {
    const rec = (promptTokens: number, cachedTokens: number): ResponsesRecord =>
      ({ seq: 0, kind: "main", kindIndex: 0, arrivedAtMs: 0, sinceStartMs: 0, url: "", headers: {}, raw: "", body: { input }, status: 200, response: { responseId: "r", calls: [], finish: "completed", usage: { promptTokens, cachedTokens, outputTokens: 5, reasoningTokens: 0 } } }) as ResponsesRecord;
    expect(recordOfResponses(rec(5000, 4096)).response!.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 4096, cache_creation_input_tokens: 904 });
    expect(recordOfResponses(rec(800, 0)).response!.usage).toMatchObject({ input_tokens: 800, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  });

  test("OpenAI's weights: no write premium, and a read shortfall within the 128-token counting step is no bust", () => {
    const prompt: WireMessage = { role: "user", content: [{ type: "text", text: "Task" }] };
    const results: WireMessage = { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "x" }] };
    const call: WireMessage = { role: "assistant", content: [{ type: "tool_use", id: "b", name: "read", input: {} }] };
    const more: WireMessage = { role: "user", content: [{ type: "tool_result", tool_use_id: "b", content: "y".repeat(400) }] };
    const run = [
      recordedRequest({ kind: "main", messages: [prompt], usage: [0, 0, 2000] }),
      recordedRequest({ kind: "main", messages: [prompt, results], usage: [0, 1920, 700] }), // 80 short of 2000: counting step
      recordedRequest({ kind: "main", messages: [prompt, results, call, more], usage: [0, 1024, 2000] }), // a bust in the loop
    ];
    const m = measureRun(run, OPENAI_WEIGHTS);
    expect(m.cost).toBeCloseTo(2000 + 0.1 * 1920 + 700 + 0.1 * 1024 + 2000, 6);
    expect(m.bustsInLoop).toBe(1);
    expect(m.bustTokensInLoop).toBe(1920 + 700 - 1024);
    // Written 2000, of which the new call and result (JSON / 4 per block) were new: the rest was re-written.
    const fresh = Math.ceil(JSON.stringify((call.content as object[])[0]).length / 4) + Math.ceil(JSON.stringify((more.content as object[])[0]).length / 4);
    expect(m.loopRewriteTokens).toBe(2000 - fresh);
    expect(m.loopRewriteCost).toBeCloseTo((2000 - fresh) * 0.9, 6);
  });
});

describe("long-loop table", () => {
  const m = (cost: number, loopRewriteCost = 0, refused = 0) => ({ ...measureRun([]), cost, loopRewriteCost, refused });
  const results: LongLoopResult[] = [
    { seed: 601, provider: "anthropic", arm: "bare", measure: m(1000), compactions: 2, heldOut: true },
    { seed: 601, provider: "anthropic", arm: "keeper", measure: m(450, 40), compactions: 0, heldOut: true },
    { seed: 601, provider: "openai", arm: "bare", measure: m(900), compactions: 2, heldOut: true },
    { seed: 601, provider: "openai", arm: "keeper", measure: m(500, 30, 1), compactions: 0, heldOut: true },
  ];

  test("ratios to the same seed and provider's bare arm, the loop rewrites' cost beside the saving", () => {
    const rows = longLoopRows(results);
    expect(rows[1]).toMatchObject({ vsBare: 0.45, savedVsBare: 0.55, loopRewritesVsBare: 0.04 });
    expect(rows[3]!.vsBare).toBeCloseTo(500 / 900, 9);
    expect(formatLongLoopTable(results)).toContain("| 601 | anthropic | keeper | 0.450 |");
  });

  test("the goal: ≤ 0.50× bare and no refused request, per seed and provider", () => {
    expect(longLoopGoals(results)).toEqual(["seed 601 anthropic: goal met", "seed 601 openai: missed: cost ≤ 0.50× bare; no refused request"]);
  });
});
