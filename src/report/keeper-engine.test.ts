/**
 * The replay steps the events the live host steps, read back from the recording
 * (recorded-events.ts): an answer's message end (a closing one flushes), each turn's end (the
 * budget trigger, counting from the engine's baseline), a compaction. No flush point of its own.
 */
import { describe, expect, test } from "bun:test";
import { applySettingsOverride, keeperReplayConfig } from "./keeper-config.ts";
import { initialKeeperReplayState, stepKeeperReplay, type KeeperReplayState, type KeeperRequestInfo } from "./keeper-engine.ts";
import { compactionAt, contextUsageOf, renderSavingOf, turnsEndedAfter } from "./recorded-events.ts";
import { sizeModelSummarizer } from "./replay-summaries.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const sonnet45: KeeperRequestInfo = { timestamp: 0, provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" };
const big = (n: number) => "x".repeat(n);
const deps = (override = {}) => ({ config: keeperReplayConfig(applySettingsOverride(DEFAULT_SETTINGS, { summarizer: { mode: "extractive" }, ...override })), summarize: sizeModelSummarizer() });
const replay = (requests: ContextMessage[][], d = deps(), from: KeeperReplayState = initialKeeperReplayState()) =>
  requests.reduce((s, messages, requestIndex) => stepKeeperReplay(s, { messages, requestIndex, info: sonnet45 }, d).state, from);

const loop = [user("p1", 1), assistant([call("a", "read", { path: "a.ts" })], 2), result("a", "read", big(4000), 3)];

describe("the recording's events", () => {
  test("turns that ended after a time: each answer with the tool results that follow it", () => {
    const messages = [...loop, assistant([text("done")], 4), user("p2", 5)];
    expect(turnsEndedAfter(messages, Number.NEGATIVE_INFINITY)).toEqual([
      { answer: 1, at: 2, end: 2 },
      { answer: 3, at: 4, end: 3 },
    ]);
    expect(turnsEndedAfter(messages, 2)).toEqual([{ answer: 3, at: 4, end: 3 }]);
    expect(turnsEndedAfter(messages, 4)).toEqual([]);
  });

  test("a compaction summary at the start of the context", () => {
    expect(compactionAt(loop)).toBeUndefined();
    const summary = { role: "compactionSummary", summary: "s", tokensBefore: 9, timestamp: 7 } as unknown as ContextMessage;
    expect(compactionAt([summary, ...loop])).toBe(7);
    // Pi 1.6 leads a compacted context with its system message (the compaction entry's own).
    const system = { role: "system", content: "You are a coding assistant", timestamp: 6 } as unknown as ContextMessage;
    expect(compactionAt([system, summary, ...loop])).toBe(7);
    expect(compactionAt([system, ...loop])).toBeUndefined();
    expect(contextUsageOf([system, summary, user("p2", 8)])).toBeNull();
  });

  test("Pi's context usage as Pi works it out: the last valid answer's usage, then characters / 4 of each message after it", () => {
    const withUsage = (m: ContextMessage, total: number) => ({ ...m, usage: { ...(m as { usage: object }).usage, input: total } }) as ContextMessage;
    // No answer with usage: every message estimated ("p1" 1 + call ceil(19 / 4) 5 + result 1000).
    expect(contextUsageOf(loop)).toBe(1 + 5 + 1000);
    const answered = [loop[0]!, withUsage(loop[1]!, 5_000), loop[2]!];
    expect(contextUsageOf(answered)).toBe(5_000 + 1000);
    // The keeper arm: the recorded usage less what the keeper's render left out of that request.
    expect(contextUsageOf(answered, [{ answerAt: 9, tokens: 5 }, { answerAt: 2, tokens: 1_200 }])).toBe(3_800 + 1000);
    expect(contextUsageOf(answered, [{ answerAt: 99, tokens: 1_200 }])).toBe(6_000);
    // An aborted answer's usage is not trusted (Pi skips it); right after a compaction Pi does not know.
    const aborted = [...answered, withUsage(assistant([text("half")], 4, { stopReason: "aborted" }), 9_000)];
    expect(contextUsageOf(aborted)).toBe(6_000 + 1);
    const summary = { role: "compactionSummary", summary: "s", tokensBefore: 9, timestamp: 7 } as unknown as ContextMessage;
    expect(contextUsageOf([summary, user("p2", 8)])).toBeNull();
  });

  test("what the render left out of a request, by Pi's estimate", () => {
    const rendered = [loop[0]!, loop[1]!, { ...loop[2]!, content: [{ type: "text", text: "stub" }] } as ContextMessage];
    expect(renderSavingOf(2, loop, rendered)).toEqual({ answerAt: 2, tokens: 1000 - 1 });
    expect(renderSavingOf(2, loop, loop)).toEqual({ answerAt: 2, tokens: 0 });
  });
});

describe("the replay steps them", () => {
  test("a closing answer: a request-end flush of the branch through it, once", () => {
    const first = [...loop, assistant([text("done")], 4), user("p2", 5)];
    const s = replay([loop, first]);
    expect(s.flushes.map((f) => f.reason)).toEqual(["request-end"]);
    expect(s.engine.keeper.frontier.stubbedKeys.length).toBe(1);
    // The next request of the same prompt: no new answer, no new flush.
    const again = replay([[...first, assistant([call("b", "read", { path: "b.ts" })], 6), result("b", "read", big(40), 7)]], deps(), s);
    expect(again.flushes).toHaveLength(1);
  });

  test("an aborted answer closes nothing, as live (no request-end flush)", () => {
    const aborted = [...loop, assistant([text("half")], 4, { stopReason: "aborted" }), user("p2", 5)];
    expect(replay([loop, aborted]).flushes).toEqual([]);
  });

  test("the budget trigger at a turn end, counting from the engine's baseline (answers without usage: Pi estimates every message)", () => {
    const d = deps({ pruning: { budgetTrigger: { maxTokens: 3000 } } });
    const requests: ContextMessage[][] = [[user("p1", 1)]];
    for (let i = 0; i < 5; i++) requests.push([...requests.at(-1)!, assistant([call(`c${i}`, "read", { path: `f${i}.ts` })], 10 + 2 * i), result(`c${i}`, "read", big(4000), 11 + 2 * i)]);
    const s = replay(requests, d);
    // ≈ 1005 tokens per turn: 3000 reached with the 3rd result; the raw branch then grows by more than 750 (a quarter) per turn.
    expect(s.flushes.map((f) => [f.requestIndex, f.reason])).toEqual([
      [3, "budget"],
      [4, "budget"],
      [5, "budget"],
    ]);
    expect(s.engine.budget.tokensAtLastFlush).toBe(contextUsageOf(requests[5]!)!);
  });

  test("a compaction since the last request: state outside the context dropped, the next request cold, the budget from zero", () => {
    const first = [...loop, assistant([text("done")], 4), user("p2", 5)];
    const s = replay([loop, first]);
    const summary = { role: "compactionSummary", summary: "earlier work", tokensBefore: 9, timestamp: 6 } as unknown as ContextMessage;
    const after = replay([[summary, user("p2", 5)]], deps(), s);
    expect(after.engine.keeper.frontier.stubbedKeys).toEqual([]);
    expect(after.engine.budget.tokensAtLastFlush).toBe(0);
    expect(after.compactedAt).toBe(6);
  });
});
