/**
 * Each part isolated inside the engine: the render (pruning phases, then the thinking strip)
 * goes on without a part that throws, and `step` reports each part once. The host's own guard
 * (a throw in a whole step) is src/host/part-isolation.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { initialEngineState, keeperRender, step } from "./index.ts";
import type { PartFault } from "./render.ts";

const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // `auto` strips old thinking
const settings = DEFAULT_SETTINGS;

const history: ContextMessage[] = [];
for (let p = 0; p < 12; p++) history.push(user(`p${p}`, 10 * p + 1), assistant([thinking(`why ${p} `.repeat(20)), call(`c${p}`, "read", { path: `f${p}.ts` })], 10 * p + 2), result(`c${p}`, "read", "x".repeat(3000), 10 * p + 3), assistant([text(`a${p}`)], 10 * p + 4));
history.push(user("now", 500));

const thinkingLeft = (ms: readonly ContextMessage[]) => ms.filter((m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking")).length;
const stubbed = (ms: readonly ContextMessage[]) => ms.filter((m) => m.role === "toolResult" && JSON.stringify(m.content).includes("output pruned")).length;
/** The keeper state with the first three reads stubbed and the thinking before timestamp 100 stripped. */
const withStubs: KeeperState = { ...emptyState(), frontier: { ...emptyState().frontier, stubbedKeys: ["c0@2#0", "c1@12#0", "c2@22#0"], flushSeq: 1, thinkingStripBoundaryTimestamp: 100 } };
/** An assistant message whose `api` (read by the thinking strip alone) cannot be read. */
const unreadableApi = (m: ContextMessage): ContextMessage =>
  Object.defineProperty({ ...m }, "api", {
    get: () => {
      throw new Error("api unreadable");
    },
  }) as ContextMessage;

describe("the render without a part that throws", () => {
  test("the baseline: both parts work (stubs, old thinking stripped)", () => {
    const faults: PartFault[] = [];
    const out = keeperRender({ messages: history, state: withStubs, settings, model: OPUS, faults });
    expect(faults).toEqual([]);
    expect(stubbed(out)).toBe(3);
    expect(thinkingLeft(out)).toBeLessThan(thinkingLeft(history));
  });

  test("thinking throws: the pruning phases still apply, the thinking is left as it was", () => {
    const messages = history.map((m, i) => (i === 1 ? unreadableApi(m) : m));
    const faults: PartFault[] = [];
    const out = keeperRender({ messages, state: withStubs, settings, model: OPUS, faults });
    expect(faults).toEqual([{ part: "thinking", error: "api unreadable" }]);
    expect(stubbed(out)).toBe(3);
    expect(thinkingLeft(out)).toBe(thinkingLeft(history));
  });

  test("pruning throws (a damaged state): the thinking strip alone still applies", () => {
    const damaged = { ...withStubs, frontier: { ...withStubs.frontier, compressedChains: null } } as unknown as KeeperState;
    const faults: PartFault[] = [];
    const out = keeperRender({ messages: history, state: damaged, settings, model: OPUS, faults });
    expect(faults.map((f) => f.part)).toEqual(["pruning"]);
    expect(stubbed(out)).toBe(0);
    expect(thinkingLeft(out)).toBeLessThan(thinkingLeft(history));
  });

  test("step reports a part once, whatever the number of renders it failed in; the render is not remembered", () => {
    const messages = history.map((m, i) => (i === 1 ? unreadableApi(m) : m));
    const facts = () => ({ requestTimes: [], cold: false, ttl: "5m" as const, ttlMs: 300_000, seamActive: false });
    const event = { type: "context" as const, settings: { ...settings, cache: { ...settings.cache, discipline: false } }, model: OPUS, messages, now: 1, facts, flushInFlight: false, recall: false };
    const first = step(initialEngineState({ keeper: withStubs }), event);
    expect(first.effects).toEqual([{ kind: "notify", level: "warning", text: expect.stringContaining("thinking failed at context (api unreadable)") }]);
    expect(first.state.renderMemo).toBeUndefined();
    expect(stubbed(first.render!)).toBe(3);
    const second = step(first.state, event);
    expect(second.effects).toEqual([]);
  });
});
