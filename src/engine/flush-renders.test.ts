/**
 * How many full renders one flush costs, counted through the engine's injected renders. The
 * flush is a straight line (capture once, propose, decide, apply); the gate measures the
 * branch before and after the proposal, and the savings estimate reuses those renders when
 * the thinking strip is off for the model (render-memo.ts). What the last request carried is
 * remembered from its render, so the gate does not render it again.
 */
import { describe, expect, test } from "bun:test";
import { renderContext } from "../prune/pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import type { DisciplineFacts } from "./decide.ts";
import { finishFlush, type FlushRenders } from "./flush.ts";
import { keeperRender } from "./render.ts";
import { completeFlush, initialEngineState, render, startFlush, type EngineState } from "./session.ts";

const SONNET = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" }; // thinking kept (auto)
const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // thinking stripped (auto)
const lines = (tag: string, chars: number) => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);

/** Two prompts of reads; the second request just ended (its closing message not persisted yet). */
function session(): { branch: ContextMessage[]; closing: ContextMessage; lastRequest: ContextMessage[] } {
  const branch: ContextMessage[] = [user("p1", 1)];
  let t = 2;
  for (let i = 0; i < 4; i++) branch.push(assistant([thinking(`why ${i}`), call(`a${i}`, "read", { path: `a${i}.ts` })], t++), result(`a${i}`, "read", lines(`a${i}`, 6000), t++));
  branch.push(assistant([text("done 1")], t++), user("p2", t++));
  for (let i = 0; i < 4; i++) branch.push(assistant([thinking(`why b${i}`), call(`b${i}`, "read", { path: `b${i}.ts` })], t++), result(`b${i}`, "read", lines(`b${i}`, 6000), t++));
  const closing = assistant([text("done 2")], t++);
  return { branch, closing, lastRequest: branch };
}

function counted(settings: KeeperSettings, model: typeof SONNET) {
  const calls = { keeper: 0, prune: 0 };
  const renders: FlushRenders = {
    keeper: (messages, state) => (calls.keeper++, keeperRender({ messages, state, settings, model })),
    prune: (input) => (calls.prune++, renderContext(input)),
  };
  return { calls, renders };
}

const facts = (cold: boolean): DisciplineFacts => ({ requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold, ttl: "5m", ttlMs: 300_000, seamActive: false });

/** A request-end flush after the engine rendered the last request, with counted renders. */
function flushOnce(o: { settings?: KeeperSettings; model?: typeof SONNET; cold: boolean }) {
  const settings = o.settings ?? DEFAULT_SETTINGS;
  const model = o.model ?? SONNET;
  const { branch, closing, lastRequest } = session();
  // The last request went out through the engine's render (as the host and the replay do).
  let state: EngineState = render(initialEngineState(), { settings, model, messages: lastRequest, now: 1, facts: () => facts(false), flushInFlight: false, recall: false }).state;
  const begun = startFlush(state, { settings, model, branchMessages: branch, closingMessage: closing });
  state = begun.state;
  const { calls, renders } = counted(settings, model);
  const done = completeFlush(state, {
    settings,
    model,
    branchMessages: branch,
    closingMessage: closing,
    capture: begun.capture,
    summaries: begun.capture.batches.map((b) => summarizeExtractively(b)),
    now: 2_000_000,
    facts: facts(o.cold),
    label: "counted",
    renders,
  });
  // The same flush without the memo or the remembered request: the very same plan.
  const plain = finishFlush({ state: state.keeper, branchMessages: branch, closingMessage: closing, settings, model, capture: begun.capture, summaries: begun.capture.batches.map((b) => summarizeExtractively(b)), now: 2_000_000, ...(settings.cache.discipline ? { discipline: { cache: settings.cache, facts: facts(o.cold), label: "counted" } } : {}) });
  expect(done.result.nextState).toEqual(plain.nextState);
  expect(done.result.entries).toEqual(plain.entries);
  return { calls, total: calls.keeper + calls.prune, result: done.result, before: state.keeper as KeeperState };
}

describe("renders per flush", () => {
  test("cache discipline on, cold cache (everything applies), thinking kept: 2 full renders", () => {
    const { total, result } = flushOnce({ cold: true });
    expect(result.rewrote).toBe(true);
    expect(result.outcome?.deferred).toEqual([]);
    expect(total).toBe(2);
  });

  test("cache discipline off: the savings estimate's 2 renders, nothing else", () => {
    const off = { ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, discipline: false } };
    const { total, result } = flushOnce({ settings: off, cold: false });
    expect(result.rewrote).toBe(true);
    expect(total).toBe(2);
  });

  test("warm cache: at most 3 (a partial apply needs a render of its own for the savings estimate)", () => {
    const { total, result } = flushOnce({ cold: false });
    expect(result.outcome).toBeDefined();
    expect(total).toBe(result.outcome!.deferred.length === 0 ? 2 : 3);
  });

  test("thinking stripped for the model: the savings estimate renders without the strip: at most 4", () => {
    const { total, calls } = flushOnce({ model: OPUS, cold: true });
    expect(calls.keeper).toBe(2);
    expect(total).toBeLessThanOrEqual(4);
  });

  test("without a remembered last request the gate renders it: one more", () => {
    const settings = DEFAULT_SETTINGS;
    const { branch, closing } = session();
    const begun = startFlush(initialEngineState(), { settings, model: SONNET, branchMessages: branch, closingMessage: closing });
    const { calls, renders } = counted(settings, SONNET);
    completeFlush(begun.state, { settings, model: SONNET, branchMessages: branch, closingMessage: closing, capture: begun.capture, summaries: [], now: 2_000_000, facts: facts(true), label: "x", renders });
    expect(calls.keeper + calls.prune).toBe(3);
  });
});
