/**
 * `step(state, event)`: what each event does to the engine state and which effects it asks
 * the caller to perform. The flush is begin → (summaries) → plan → (spills) → written, and
 * the state adopts the plan only at `flush-written`.
 */
import { describe, expect, test } from "bun:test";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { emptyState } from "../state/schema.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import type { DisciplineFacts } from "./decide.ts";
import { effectOf, initialEngineState, step, type EngineState } from "./index.ts";
import { keeperRender } from "./render.ts";
import { reuseBlocker } from "./render-memo.ts";

const SONNET = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // `auto` strips old thinking
const settings = DEFAULT_SETTINGS;
const big = (tag: string) => Array.from({ length: 150 }, (_, i) => `${tag} row ${i}`.padEnd(39, ".")).join("\n");
const facts = (cold: boolean): DisciplineFacts => ({ requestTimes: [0, 10_000], cold, ttl: "5m", ttlMs: 300_000, seamActive: false });

/** One finished prompt of reads, closed by `closing` (not yet in the branch, as at message_end). */
function session(): { branch: ContextMessage[]; closing: ContextMessage } {
  const branch: ContextMessage[] = [user("p1", 1)];
  for (let i = 0; i < 3; i++) branch.push(assistant([call(`r${i}`, "read", { path: `r${i}.ts` })], 2 + 2 * i), result(`r${i}`, "read", big(`r${i}`), 3 + 2 * i));
  return { branch, closing: assistant([text("done")], 20) };
}

function flushLine(state: EngineState, o: { settings?: KeeperSettings; between?: (s: EngineState) => EngineState } = {}) {
  const s = o.settings ?? settings;
  const { branch, closing } = session();
  const begun = step(state, { type: "flush-begin", settings: s, model: SONNET, branchMessages: branch, closingMessage: closing });
  const { capture } = effectOf(begun, "summarize");
  const mid = o.between ? o.between(begun.state) : begun.state;
  const planned = step(mid, {
    type: "flush-plan",
    settings: s,
    model: SONNET,
    branchMessages: branch,
    closingMessage: closing,
    summaries: capture.batches.map((b) => summarizeExtractively(b)),
    now: 1_000,
    facts: undefined,
    label: "test",
  });
  const spills = effectOf(planned, "write-spills");
  const written = step(planned.state, { type: "flush-written", result: spills.result, failed: [], contextTokens: 42_000 });
  return { begun, capture, planned, spills, written };
}

describe("step: a flush", () => {
  test("begin asks for summaries of the captured batches; plan asks for spills; written adopts and asks to append", () => {
    const state = initialEngineState();
    const { begun, capture, planned, spills, written } = flushLine(state);
    expect(capture.batches.length).toBeGreaterThan(0);
    expect(begun.state.flushing?.capture).toBe(capture);
    // Nothing adopted before the spills are written.
    expect(planned.state.keeper).toBe(begun.state.keeper);
    expect(planned.state.flushing).toBeUndefined();
    expect(written.state.keeper).toBe(spills.result.nextState);
    expect(written.state.keeper.frontier.stubbedKeys.length).toBe(3);
    expect(written.effects).toEqual([{ kind: "append", entries: spills.result.entries }]);
    expect(written.state.budget.tokensAtLastFlush).toBe(42_000);
  });

  test("a compaction between begin and plan: the plan starts from the state after it", () => {
    const prior = flushLine(initialEngineState()).written.state;
    // A second flush (nothing new to summarize); a compaction drops the stubs while it runs.
    const again = flushLine(prior, { between: (s) => step(s, { type: "compacted", context: [] }).state });
    expect(again.capture.batches).toEqual([]);
    expect(again.planned.state.keeper.frontier.stubbedKeys).toEqual([]);
    expect(again.planned.state.ledger.compacted).toBe(true);
    // Nothing comes back from the state before the compaction: those batches have no summary in this flush.
    expect(again.spills.result.nextState.frontier.stubbedKeys).toEqual([]);
  });
});

describe("step: triggers", () => {
  test("message-end: an answer that closes the request asks for a request-end flush; a tool call does not", () => {
    const closing = assistant([text("done")], 5);
    expect(step(initialEngineState(), { type: "message-end", settings, message: closing }).effects).toEqual([{ kind: "flush", trigger: "request-end", closingMessage: closing }]);
    expect(step(initialEngineState(), { type: "message-end", settings, message: assistant([call("x", "read")], 5) }).effects).toEqual([]);
    const off = { ...settings, enabled: false };
    const state = initialEngineState();
    expect(step(state, { type: "message-end", settings: off, message: closing })).toEqual({ state, effects: [] });
  });

  test("turn-end: the budget fires past the threshold, and counts from the last flush", () => {
    const window = 200_000;
    const fire = (state: EngineState, tokens: number) => step(state, { type: "turn-end", settings, contextTokens: tokens, contextWindow: window });
    expect(fire(initialEngineState(), 20_000).effects).toEqual([]);
    expect(fire(initialEngineState(), 120_000).effects).toEqual([{ kind: "flush", trigger: "budget" }]);
    const afterFlush = initialEngineState({ budget: { tokensAtLastFlush: 115_000, handoffsSeen: 0 } });
    expect(fire(afterFlush, 120_000).effects).toEqual([]);
  });

  test("turn-end after an async compaction handoff: no flush, the budget re-bases on the compacted context", () => {
    // Async compaction's state, one job handed to Pi since the budget last counted.
    const handedOff = initialEngineState();
    const out = step({ ...handedOff, compaction: { ...handedOff.compaction, handoffs: 1 } }, { type: "turn-end", settings, contextTokens: 150_000, contextWindow: 200_000 });
    expect(out.effects).toEqual([]);
    expect(out.state.budget).toEqual({ tokensAtLastFlush: 150_000, handoffsSeen: 1 });
  });
});

describe("step: render, restore, compaction", () => {
  // Twenty answered prompts with thinking, then a new one: on a cold cache the render re-plans (the strip boundary).
  const messages: ContextMessage[] = [];
  for (let p = 0; p < 20; p++) messages.push(user(`p${p}`, 10 * p + 1), assistant([thinking(`why ${p} `.repeat(50)), text(`a${p}`)], 10 * p + 2));
  messages.push(user("last", 201));

  test("context on a cold cache: the render shows the re-plan at once; its spills and entries wait for the request", () => {
    const out = step(initialEngineState(), { type: "context", settings, model: OPUS, messages, now: 1, facts: () => facts(true), flushInFlight: false, recall: true });
    expect(out.render).not.toBe(messages);
    expect(out.effects).toEqual([]);
    const [replan] = out.state.replans;
    expect(out.state.replans).toHaveLength(1);
    expect(out.state.keeper).toBe(replan!.nextState);
    expect(out.state.wire.tally.recorded).toBe(1);
    // The request is built: the re-plan is handed out once, then committed.
    const built = step(out.state, { type: "request-built" });
    expect(built.effects).toEqual([{ kind: "commit-replans", results: [replan!] }]);
    expect(built.state.replans).toEqual([]);
    expect(step(built.state, { type: "request-built" }).effects).toEqual([]);
    const written = step(built.state, { type: "replans-written", results: [replan!], failed: [] });
    expect(written.state).toBe(built.state);
    expect(written.effects).toEqual([{ kind: "append", entries: replan!.entries }]);
  });

  test("context on a warm cache, or with a flush running: no re-plan, the same array when nothing is due", () => {
    const warm = step(initialEngineState(), { type: "context", settings, model: OPUS, messages, now: 1, facts: () => facts(false), flushInFlight: false, recall: true });
    expect(warm.state.replans).toEqual([]);
    const kept = step(initialEngineState(), { type: "context", settings, model: SONNET, messages, now: 1, facts: () => facts(false), flushInFlight: false, recall: true });
    expect(kept.render).toBe(messages);
    const busy = step(initialEngineState(), { type: "context", settings, model: OPUS, messages, now: 1, facts: () => facts(true), flushInFlight: true, recall: true });
    expect(busy.state.replans).toEqual([]);
  });

  test("render-ahead after a flush: the next prompt's request reuses it (no full render), the same render, and no request is recorded", () => {
    const { branch, closing } = session();
    const { written } = flushLine(initialEngineState());
    const answered = [...branch, closing];
    const ahead = step(written.state, { type: "render-ahead", settings, model: SONNET, messages: structuredClone(answered) });
    expect(ahead.state.lastRender).toBe(written.state.lastRender);
    expect(ahead.state.renderMemo?.probe).toBe(answered.length);
    const request = [...structuredClone(answered), user("p2", 30)];
    const full = keeperRender({ messages: structuredClone(request), state: ahead.state.keeper, settings, model: SONNET });
    expect(reuseBlocker(ahead.state.renderMemo, { messages: request, state: ahead.state.keeper, settings, model: SONNET })).toBeUndefined();
    const out = step(ahead.state, { type: "context", settings, model: SONNET, messages: request, now: 1, facts: () => facts(false), flushInFlight: false, recall: true });
    expect(JSON.stringify(out.render)).toBe(JSON.stringify(full));
    expect(out.render).not.toBe(request); // the flush stubbed the reads
  });

  test("restored: the branch's state, no remembered render or running capture, the budget from Pi's usage", () => {
    const { begun } = flushLine(initialEngineState());
    const out = step(begun.state, { type: "restored", branch: [], context: [], key: { thinkingLevel: "off", toolsDigest: "" }, contextTokens: 9_000 });
    expect(out.state.keeper).toEqual(emptyState());
    expect(out.state.flushing).toBeUndefined();
    expect(out.state.lastRender).toBeUndefined();
    expect(out.state.budget.tokensAtLastFlush).toBe(9_000);
    expect(out.effects).toEqual([]);
  });

  test("restored from a branch with a damaged entry: the problem is kept for /keeper and told once", () => {
    const damaged = { type: "custom", customType: "context-keeper/flush", id: "x", data: { version: 999 } };
    const out = step(initialEngineState(), { type: "restored", branch: [damaged], context: [], key: { thinkingLevel: "off", toolsDigest: "" }, contextTokens: 0 });
    expect(out.state.problems.length).toBeGreaterThan(0);
    expect(out.effects).toEqual([{ kind: "notify", level: "warning", text: expect.stringContaining("restored the saved state with") }]);
  });

  test("compacted: state outside the context dropped, the next request cold, the budget from zero", () => {
    const { written } = flushLine(initialEngineState());
    const out = step(written.state, { type: "compacted", context: [] });
    expect(out.state.keeper.frontier.stubbedKeys).toEqual([]);
    expect(out.state.ledger.compacted).toBe(true);
    expect(out.state.budget.tokensAtLastFlush).toBe(0);
  });
});
