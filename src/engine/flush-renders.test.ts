/**
 * How many full renders one flush costs, counted through the engine's injected renders: at
 * most 2, in every case. Under cache discipline the gate renders the branch before and after
 * the whole proposal, and the savings estimate comes from those two renders (decide.ts:
 * `savedByApplied`), so neither a partial apply nor the thinking strip costs a render of its
 * own. Without the gate the savings estimate's two renders are the only ones. What the last
 * request carried is the engine's render of it, even when a flush was adopted since (a queued
 * flush); when the engine holds none (the first flush after a restart or a compaction) the
 * gate takes the current state's render of that prefix, from the renders it already has.
 */
import { describe, expect, test } from "bun:test";
import { renderContext } from "../prune/pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { estimateTokensSaved } from "../flush/savings.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { pruneConfigFrom } from "./config.ts";
import type { DisciplineFacts } from "./decide.ts";
import { finishFlush, type FlushRenders } from "./flush.ts";
import { keeperRender } from "./render.ts";
import { completeFlush, initialEngineState, render, startFlush, type EngineState } from "./session.ts";

const SONNET = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" }; // thinking kept (auto)
const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // thinking stripped (auto)
const lines = (tag: string, chars: number) => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);

interface Session {
  branch: ContextMessage[];
  closing: ContextMessage | undefined;
  /** What the last request carried (the engine rendered it). */
  lastRequest: ContextMessage[];
}

/**
 * Two prompts of reads; the second request just ended (its closing message not persisted yet).
 * `tail`: a long unprunable answer after the reads, so a warm cache holds the stubs back (the
 * rewrite after them costs more than they save).
 */
function requestEnd(o: { readChars?: number; tail?: number } = {}): Session {
  const branch: ContextMessage[] = [user("p1", 1)];
  let t = 2;
  for (let i = 0; i < 4; i++) branch.push(assistant([thinking(`why ${i}`), call(`a${i}`, "read", { path: `a${i}.ts` })], t++), result(`a${i}`, "read", lines(`a${i}`, o.readChars ?? 6000), t++));
  branch.push(assistant([text(o.tail ? lines("answer", o.tail) : "done 1")], t++), user("p2", t++));
  for (let i = 0; i < 4; i++) branch.push(assistant([thinking(`why b${i}`), call(`b${i}`, "read", { path: `b${i}.ts` })], t++), result(`b${i}`, "read", lines(`b${i}`, 6000), t++));
  const closing = assistant([text("done 2")], t++);
  return { branch, closing, lastRequest: branch };
}

/** Inside the second prompt's tool loop (a budget flush): no closing message, no prompt probe. */
function budget(): Session {
  const s = requestEnd();
  const branch = [...s.branch, assistant([thinking("more"), call("b9", "read", { path: "b9.ts" })], 100), result("b9", "read", lines("b9", 6000), 101)];
  return { branch, closing: undefined, lastRequest: branch.slice(0, -2) };
}

function counted(settings: KeeperSettings, model: typeof SONNET) {
  const calls = { keeper: 0, prune: 0 };
  const renders: FlushRenders = {
    keeper: (messages, state, strippedFrom) => (calls.keeper++, keeperRender({ messages, state, settings, model, strippedFrom })),
    prune: (input) => (calls.prune++, renderContext(input)),
  };
  return { calls, renders };
}

const facts = (cold: boolean, requests = 20): DisciplineFacts => ({ requestTimes: Array.from({ length: requests }, (_, i) => i * 10_000), cold, ttl: "5m", ttlMs: 300_000, seamActive: false });
const DISCIPLINE_OFF: KeeperSettings = { ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, discipline: false } };

/** A flush after the engine rendered the last request, with counted renders. */
function flushOnce(o: { settings?: KeeperSettings; model?: typeof SONNET; facts?: DisciplineFacts; session?: Session; remembered?: boolean }) {
  const settings = o.settings ?? DEFAULT_SETTINGS;
  const model = o.model ?? SONNET;
  const { branch, closing, lastRequest } = o.session ?? requestEnd();
  const f = o.facts ?? facts(true);
  // The last request went out through the engine's render (as the host and the replay do).
  let state: EngineState = initialEngineState();
  if (o.remembered !== false) state = render(state, { settings, model, messages: lastRequest, now: 1, facts: () => facts(false), flushInFlight: false, recall: false }).state;
  const begun = startFlush(state, { settings, model, branchMessages: branch, closingMessage: closing });
  state = begun.state;
  const summaries = begun.capture.batches.map((b) => summarizeExtractively(b));
  const { calls, renders } = counted(settings, model);
  const done = completeFlush(state, { settings, model, branchMessages: branch, closingMessage: closing, capture: begun.capture, summaries, now: 2_000_000, facts: f, label: "counted", renders });
  // The same flush without the remembered request: the very same plan.
  const plain = finishFlush({ state: state.keeper, branchMessages: branch, closingMessage: closing, settings, model, capture: begun.capture, summaries, now: 2_000_000, ...(settings.cache.discipline ? { discipline: { cache: settings.cache, facts: f, label: "counted" } } : {}) });
  expect(done.result.nextState).toEqual(plain.nextState);
  expect(done.result.entries).toEqual(plain.entries);
  return { calls, total: calls.keeper + calls.prune, result: done.result, before: state.keeper, branch, closing };
}

const held = (r: ReturnType<typeof flushOnce>) => r.result.outcome?.deferred.filter((id) => r.result.outcome?.verdicts[id] !== "invisible") ?? [];

describe("renders per flush: at most 2, in every case", () => {
  test("cache discipline on, cold cache (everything applies), thinking kept", () => {
    const r = flushOnce({});
    expect(r.result.rewrote).toBe(true);
    expect(r.result.outcome?.deferred).toEqual([]);
    expect(r.total).toBe(2);
  });

  test("cache discipline off: the savings estimate's 2 renders, nothing else", () => {
    const r = flushOnce({ settings: DISCIPLINE_OFF });
    expect(r.result.rewrote).toBe(true);
    expect(r.calls).toEqual({ keeper: 0, prune: 2 });
  });

  test("warm cache, the gate holds stubs back: still 2", () => {
    const r = flushOnce({ facts: facts(false, 2), session: requestEnd({ readChars: 1500, tail: 200_000 }) });
    expect(held(r).length).toBeGreaterThan(0);
    expect(r.result.outcome!.applied.length).toBeGreaterThan(0);
    expect(r.total).toBe(2);
  });

  test("thinking stripped for the model: 2 (the savings estimate leaves the strip out without a strip-less render)", () => {
    const r = flushOnce({ model: OPUS });
    expect(r.result.outcome?.applied.some((id) => id.startsWith("thinking:"))).toBe(true);
    expect(r.calls).toEqual({ keeper: 2, prune: 0 });
  });

  test("thinking stripped and the gate holds something back: 2", () => {
    const r = flushOnce({ model: OPUS, facts: facts(false, 2), session: requestEnd({ readChars: 1500, tail: 200_000 }) });
    expect(held(r).length).toBeGreaterThan(0);
    expect(r.total).toBe(2);
  });

  test("a budget flush inside a tool loop (no prompt probe): 2", () => {
    const r = flushOnce({ session: budget() });
    expect(r.result.outcome).toBeDefined();
    expect(r.total).toBe(2);
  });

  test("without a remembered last request (a restore, a compaction): 2, and the same plan", () => {
    const r = flushOnce({ remembered: false });
    expect(r.total).toBe(2);
    expect(r.result.nextState).toEqual(flushOnce({}).result.nextState);
  });
});

describe("a flush queued behind another (no request in between)", () => {
  /**
   * Flush A (its capture taken when only the first read had finished) applies that read's stub;
   * flush B runs before any request. The cache still holds what the last request carried, so
   * the next request rewrites from A's stub whatever B does: B's stubs of the second prompt's
   * last reads ride along that forced rewrite.
   */
  function queued(o: { lastRequestHeld: boolean; nextPromptSent?: boolean }) {
    const settings = DEFAULT_SETTINGS;
    const model = SONNET;
    const { branch, closing, lastRequest } = requestEnd({ readChars: 1500, tail: 200_000 });
    let state = initialEngineState();
    // The next prompt's request may go out while the flushes run: its render carries the same prefix.
    const sent = o.nextPromptSent ? [...branch, closing!, user("p3", 1_000)] : lastRequest;
    if (o.lastRequestHeld) state = render(state, { settings, model, messages: sent, now: 1, facts: () => facts(false), flushInFlight: false, recall: false }).state;
    const a = startFlush(state, { settings, model, branchMessages: branch.slice(0, 4) });
    const aDone = completeFlush(a.state, { settings, model, branchMessages: branch, closingMessage: closing, capture: a.capture, summaries: a.capture.batches.map((x) => summarizeExtractively(x)), now: 2_000_000, facts: facts(true), label: "A" });
    expect(aDone.result.outcome?.applied).toEqual(["stub:a0@2#0"]);
    const b = startFlush(aDone.state, { settings, model, branchMessages: branch, closingMessage: closing });
    const { calls, renders } = counted(settings, model);
    const bDone = completeFlush(b.state, { settings, model, branchMessages: branch, closingMessage: closing, capture: b.capture, summaries: b.capture.batches.map((x) => summarizeExtractively(x)), now: 2_000_100, facts: facts(false, 2), label: "B", renders });
    const verdictOf = (call: string) => Object.entries(bDone.result.outcome!.verdicts).find(([id]) => id.startsWith(`stub:${call}@`))?.[1];
    return { outcome: bDone.result.outcome!, verdictOf, total: calls.keeper + calls.prune };
  }

  test("B sees A's rewrite as forced: its earlier stubs ride along, in 2 renders", () => {
    const r = queued({ lastRequestHeld: true });
    expect(r.total).toBe(2);
    for (const call of ["b2", "b3"]) expect(r.verdictOf(call)).toBe("rides-along");
    expect(r.outcome.log.map((e) => [e.position, e.decision.reason])).toEqual([[2, "forced"]]);
  });

  test("the next prompt's request went out before B planned: its render of the same prefix stands for the last request", () => {
    const r = queued({ lastRequestHeld: true, nextPromptSent: true });
    for (const call of ["b2", "b3"]) expect(r.verdictOf(call)).toBe("rides-along");
    expect(r.outcome.log.map((e) => [e.position, e.decision.reason])).toEqual([[2, "forced"]]);
  });

  test("without the last request held, the gate cannot know of A's rewrite: nothing is forced, the ended loop's own chain pays alone", () => {
    const r = queued({ lastRequestHeld: false });
    // A's boundary does not freeze the loop that just ended: its chain collapses from its start
    // (a short rewrite), the first prompt's stubs before A's frozen boundary wait.
    for (const call of ["b2", "b3"]) expect(r.verdictOf(call)).toBe("pays-alone");
    expect(r.verdictOf("a1")).toBe("frozen");
    expect(r.outcome.log.map((e) => e.decision.reason)).toEqual(["pays"]);
  });
});

describe("the savings estimate under the gate", () => {
  /** The estimate a flush without the gate makes: two renders without the thinking strip. */
  const renderedEstimate = (r: ReturnType<typeof flushOnce>, settings: KeeperSettings) =>
    estimateTokensSaved({ messages: [...r.branch, r.closing!], before: r.before, after: { ...r.result.nextState, stats: r.before.stats }, config: pruneConfigFrom(settings) });
  const savedBy = (r: ReturnType<typeof flushOnce>) => r.result.nextState.stats.tokensSavedEstimate - r.before.stats.tokensSavedEstimate;

  test("equals the render-based estimate when everything applies (stubs and a chain, thinking kept)", () => {
    const r = flushOnce({});
    expect(r.result.outcome?.deferred).toEqual([]);
    expect(renderedEstimate(r, DEFAULT_SETTINGS)).toBeGreaterThan(1000);
    expect(savedBy(r)).toBe(renderedEstimate(r, DEFAULT_SETTINGS));
  });

  test("leaves the thinking strip out, as the render-based estimate does (thinking stripped for the model)", () => {
    const r = flushOnce({ model: OPUS });
    expect(r.result.outcome?.applied.some((id) => id.startsWith("thinking:"))).toBe(true);
    expect(savedBy(r)).toBe(renderedEstimate(r, DEFAULT_SETTINGS));
  });

  test("counts only what the gate applied", () => {
    const all = flushOnce({ facts: facts(true), session: requestEnd({ readChars: 1500, tail: 200_000 }) });
    const part = flushOnce({ facts: facts(false, 2), session: requestEnd({ readChars: 1500, tail: 200_000 }) });
    expect(held(part).length).toBeGreaterThan(0);
    expect(part.result.nextState.stats.tokensSavedEstimate).toBeLessThan(all.result.nextState.stats.tokensSavedEstimate);
  });
});
