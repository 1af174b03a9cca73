import { describe, expect, test } from "bun:test";
import { ARMS, selectArms } from "./arms.ts";
import { applySettingsOverride, keeperReplayConfig } from "./keeper-config.ts";
import { createKeeperReplayEngine, initialKeeperReplayState, stepKeeperReplay, type KeeperRequestInfo } from "./keeper-engine.ts";
import { fitToLength, sizeModelSummarizer, sizeModelSummaryTokens } from "./replay-summaries.ts";
import { reportSession } from "./session-report.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { syntheticSession } from "../../test/support/report/arms-fixtures.ts";

const sonnet45: KeeperRequestInfo = { timestamp: 0, provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" };
const big = (n: number) => "x".repeat(n);

describe("arm selection", () => {
  test("bare and keeper always come first; aliases resolve; unknown names are returned", () => {
    const { arms, unknown } = selectArms("no-thinking-strip,nope,no-pruning");
    expect(arms.map((a) => a.name)).toEqual(["bare", "keeper", "no-pruning", "thinking-off"]);
    expect(unknown).toEqual(["nope"]);
    expect(selectArms(undefined).arms).toHaveLength(ARMS.length);
  });

  test("variants differ from the defaults in exactly the named setting", () => {
    const byName = Object.fromEntries(ARMS.map((a) => [a.name, a]));
    expect(byName["no-error-purge"].settings?.pruning.errorPurge.enabled).toBe(false);
    expect(byName["no-error-purge"].settings?.pruning.chainCompression).toEqual(DEFAULT_SETTINGS.pruning.chainCompression);
    expect(byName["thinking-flush-gated"].settings?.thinkingStrip).toEqual({ ...DEFAULT_SETTINGS.thinkingStrip, mode: "flush-gated" });
    expect(byName.keeper.settings).toEqual(DEFAULT_SETTINGS);
    expect(byName.bare.settings).toBeUndefined();
  });

  test("settings map onto the pruning config; the recall tool is always protected", () => {
    const c = keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { pruning: { minBatchChars: 77, protectedTools: ["bash"] } }));
    expect(c.prune.minBatchChars).toBe(77);
    expect([...c.prune.protectedTools].sort()).toEqual(["bash"]);
    expect(c.prune.budgetTrigger).toEqual(DEFAULT_SETTINGS.pruning.budgetTrigger);
  });
});

describe("size model", () => {
  test("summary tokens = min(raw, round(120 + 0.04 raw))", () => {
    expect(sizeModelSummaryTokens(1000)).toBe(160); // 120 + 40
    expect(sizeModelSummaryTokens(100)).toBe(100); // 124 > 100: capped at raw
    expect(sizeModelSummaryTokens(10_000)).toBe(520); // 120 + 400
  });

  test("fitToLength cuts or pads to the exact length", () => {
    expect(fitToLength("abcdef", 4)).toBe("abc…");
    expect(fitToLength("ab", 10)).toHaveLength(10);
    expect(fitToLength("ab", 10).startsWith("ab\n")).toBe(true);
  });

  test("a batch's summary weighs the modelled tokens and costs prompt + 5 × output", () => {
    const batch = {
      batchKey: "k",
      assistantTimestamp: 1,
      calls: [{ occurrenceKey: "c@1#0", toolCallId: "c", toolName: "read", arguments: { path: "a.ts" }, resultText: big(6200), isError: false, assistantTimestamp: 1, resultTimestamp: 2 }],
    };
    const r = sizeModelSummarizer()(batch);
    // raw = ceil(6200 / 3.1) = 2000 tokens; S = 120 + 0.04 × 2000 = 200 tokens = 640 chars.
    expect(r.summary.outputTokens).toBe(200);
    expect(r.summary.text).toHaveLength(640);
    expect(r.summary.source).toBe("model");
    expect(r.billed).toBe(r.summary.inputTokens + 5 * 200);
    expect(r.summary.inputTokens).toBeGreaterThan(2000); // the prompt carries the whole output
  });
});

describe("keeper engine", () => {
  // summarizer.mode "model": every batch goes to the size model (the default "auto" would pick extractive here).
  const deps = { config: keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { summarizer: { mode: "model" } })), summarize: sizeModelSummarizer() };

  test("after the request-end flush the old big output renders as a stub; the current loop is untouched", () => {
    const first = [user("p1", 1), assistant([call("a", "read", { path: "a.ts" })], 2), result("a", "read", big(8000), 3), assistant([text("done")], 4)];
    const second: ContextMessage[] = [...first, user("p2", 5), assistant([call("b", "read", { path: "b.ts" })], 6), result("b", "read", big(8000), 7)];
    const s1 = stepKeeperReplay(initialKeeperReplayState(), { messages: second.slice(0, 5), requestIndex: 2, info: sonnet45 }, deps);
    expect(s1.state.flushes).toHaveLength(1);
    expect(s1.state.summarizer.calls).toBe(1);
    // raw = ceil(8000 / 3.1) = 2581 tokens → S = round(120 + 103.24) = 223
    expect(s1.state.summarizer.outputTokens).toBe(223);
    const s2 = stepKeeperReplay(s1.state, { messages: second, requestIndex: 3, info: sonnet45 }, deps);
    expect(s2.state.flushes).toHaveLength(1); // no new flush mid-loop (budget not reached)
    const out = s2.rendered;
    expect(JSON.stringify(out).length).toBeLessThan(JSON.stringify(second).length - 6000);
    expect(out.slice(-2)).toEqual(second.slice(-2));
  });

  test("a long tool loop flushes on the budget trigger once the context reaches the threshold, not otherwise", () => {
    const tight = keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { pruning: { budgetTrigger: { maxTokens: 3000 } } }));
    const engine = createKeeperReplayEngine({ config: tight, summarize: sizeModelSummarizer() });
    let messages: ContextMessage[] = [user("p1", 1)];
    const reasons: string[][] = [];
    for (let i = 0; i < 6; i++) {
      engine.transformContext(messages, i, sonnet45);
      reasons.push(engine.state().flushes.map((f) => f.reason));
      messages = [...messages, assistant([call(`c${i}`, "read", { path: `f${i}.ts` })], 10 + 2 * i), result(`c${i}`, "read", big(4000), 11 + 2 * i)];
    }
    // Each result adds ≈ 1004 tokens: the context first reaches 3000 with the 3rd result (request 3);
    // after that the raw branch grows by more than a quarter of the threshold at every step.
    expect(reasons.map((r) => r.length)).toEqual([0, 0, 0, 1, 2, 3]);
    expect(reasons.at(-1)).toEqual(["budget", "budget", "budget"]);
    // Both in-loop triggers off: nothing flushes inside the loop.
    const off = createKeeperReplayEngine({ config: keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { pruning: { budgetTrigger: { enabled: false }, loopFlush: { enabled: false } } })), summarize: sizeModelSummarizer() });
    off.transformContext(messages, 0, sonnet45);
    expect(off.state().flushes).toEqual([]);
  });

  test("thinking: auto keeps it on Sonnet 4.5, flush-gated strips old thinking after a flush", () => {
    const history: ContextMessage[] = [];
    for (let p = 0; p < 3; p++) history.push(user(`p${p}`, 100 * p + 1), assistant([thinking(`why ${p}`), text(`answer ${p}`)], 100 * p + 2));
    history.push(user("p3", 301));
    const keepOne = { thinkingStrip: { keepLastTurns: 1 } };
    const auto = keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, keepOne));
    const gated = keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { thinkingStrip: { mode: "flush-gated", keepLastTurns: 1 } }));
    const thinkingCount = (ms: ContextMessage[]) => ms.filter((m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking")).length;
    const a = stepKeeperReplay(initialKeeperReplayState(), { messages: history, requestIndex: 0, info: sonnet45 }, { config: auto, summarize: sizeModelSummarizer() });
    expect(thinkingCount(a.rendered)).toBe(3);
    const g = stepKeeperReplay(initialKeeperReplayState(), { messages: history, requestIndex: 0, info: sonnet45 }, { config: gated, summarize: sizeModelSummarizer() });
    expect(thinkingCount(g.rendered)).toBe(1); // keep the last 1 assistant's thinking
    const opus = { ...sonnet45, model: "claude-opus-4-5" };
    const o = stepKeeperReplay(initialKeeperReplayState(), { messages: history, requestIndex: 0, info: opus }, { config: auto, summarize: sizeModelSummarizer() });
    expect(thinkingCount(o.rendered)).toBe(1); // auto strips on a keeps-all model
  });

  test("disabled config: the recorded context passes through", () => {
    const messages = [user("p", 1)];
    const config = { ...keeperReplayConfig(), enabled: false };
    expect(stepKeeperReplay(initialKeeperReplayState(), { messages, requestIndex: 0, info: sonnet45 }, { config, summarize: sizeModelSummarizer() }).rendered).toBe(messages);
  });
});

describe("arms over a replayed session", () => {
  const text = syntheticSession({ prompts: 5, callsPerPrompt: 2, outputChars: 9000 });
  const run = reportSession({ file: "synthetic.jsonl", text, arms: selectArms("summarizer-model,no-pruning,no-chain-compression").arms, summaries: "size-model" });
  const arms = run.report.arms;

  test("every arm replays every request; bare is the ratio's base", () => {
    // 5 prompts × (2 tool calls + 1 final answer) = 15 requests
    expect(run.report.requests).toBe(15);
    expect(run.report.user_prompts).toBe(5);
    for (const a of Object.values(arms)) expect(a.requests).toBe(15);
    expect(arms.bare.ratio_to_bare).toBe(1);
    expect(arms.bare.flushes).toBe(0);
  });

  test("the keeper flushes at each request end (4 before a later prompt) and shrinks the context", () => {
    expect(arms.keeper.flushes).toBe(4);
    // summarizer.mode "auto": a 9000-char batch has R = ceil(9000 / 3.1) = 2904, S = 236, so the
    // model costs ≥ 2904 + 5 × 236 = 4084 and saves (2904 − 236) × 0.1 = 266.8 per request:
    // it pays from N ≈ 16 requests on. At the last flush 12 requests were sent 10 s apart:
    // q = 12/13, N = 1 + 12 × (1 − (12/13)^12) ≈ 8.4. So no model call in this short session…
    expect(arms.keeper.summarizer_calls).toBe(0);
    expect(arms.keeper.summarizer_cost).toBe(0);
    // …while "model" asks for every captured batch.
    expect(arms["summarizer-model"].flushes).toBe(4);
    expect(arms["summarizer-model"].summarizer_calls).toBeGreaterThan(0);
    expect(arms["summarizer-model"].summarizer_cost).toBeGreaterThan(0);
    expect(arms.keeper.peak_context_tokens).toBeLessThan(arms.bare.peak_context_tokens);
    expect(arms.keeper.ratio_to_bare).toBeCloseTo((arms.keeper.billed_input + arms.keeper.summarizer_cost) / arms.bare.billed_input, 12);
    // no pruning: nothing rewritten, same wire as bare
    expect(arms["no-pruning"].billed_input).toBeCloseTo(arms.bare.billed_input, 6);
    expect(arms["no-pruning"].summarizer_cost).toBe(0);
  });

  test("series have one point per request", () => {
    expect(run.series.keeper.contextTokens).toHaveLength(15);
    expect(run.series.bare.read).toHaveLength(15);
  });
});
