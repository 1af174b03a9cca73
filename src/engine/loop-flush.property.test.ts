/**
 * Flushes inside a running tool loop, over generated sessions (long current loops of parallel,
 * failing, reused-id and recall calls, with thinking): whatever they stub, the current loop goes
 * back as the provider requires — every assistant message of the loop the very object it was
 * (thinking, signatures, calls untouched), every call with its result (same id, tool, error flag
 * and time; only an older step's output text may become a stub), the loop's last
 * `keepRecentSteps` steps byte for byte, and no call or result left alone that the raw context
 * had paired. Two flushes in a row (a second one after more steps), with the gate (warm, and on a
 * cold cache where everything due applies) and without it.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { costModelFor } from "../cache/cost-model.ts";
import { loopShapeOf } from "../discipline/loop-horizon.ts";
import { recentStepsFrom } from "../flush/loop-candidates.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { isAssistant, isToolResult, type ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { buildSession, deepFreeze, longLoopSessionSpec } from "../../test/support/property/session-arbitrary.ts";
import type { DisciplineFacts } from "./decide.ts";
import { keeperRender } from "./render.ts";
import { initialEngineState, type EngineState } from "./session.ts";
import { effectOf, step } from "./step.ts";

const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const sonnet = costModelFor({ ref: { provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" } });
type Gate = "off" | "warm" | "cold";

function settingsFor(gate: Gate, keepRecentSteps: number): KeeperSettings {
  return {
    ...DEFAULT_SETTINGS,
    pruning: { ...DEFAULT_SETTINGS.pruning, loopFlush: { ...DEFAULT_SETTINGS.pruning.loopFlush, keepRecentSteps } },
    cache: { ...DEFAULT_SETTINGS.cache, discipline: gate !== "off" },
  };
}

const factsFor = (gate: Gate): DisciplineFacts | undefined =>
  gate === "off" ? undefined : { requestTimes: [0, 10_000, 20_000], cold: gate === "cold", ttl: "5m", ttlMs: 300_000, seamActive: false, costModel: sonnet };

/** One loop flush through the engine's entry point, as the host and the replay run it. */
function loopFlush(state: EngineState, branch: ContextMessage[], settings: KeeperSettings, gate: Gate): EngineState {
  const begun = step(state, { type: "flush-begin", trigger: "loop", settings, model: MODEL, branchMessages: branch });
  const { capture, routes } = effectOf(begun, "summarize");
  expect(routes.every((r) => r === false)).toBe(true);
  const planned = step(begun.state, { type: "flush-plan", settings, model: MODEL, branchMessages: branch, summaries: capture.batches.map((b) => summarizeExtractively(b)), now: 1_000_000, facts: factsFor(gate), label: "property loop flush" });
  const { result } = effectOf(planned, "write-spills");
  return step(planned.state, { type: "flush-written", result, failed: [], contextTokens: undefined }).state;
}

/** The invariant over one render of a branch that ends inside its loop. */
function checkLoop(raw: readonly ContextMessage[], rendered: readonly ContextMessage[], keepRecentSteps: number): void {
  const shape = loopShapeOf(raw);
  expect(shape.running).toBe(true);
  const loopRaw = raw.slice(shape.loopStart);
  const loopSent = rendered.slice(rendered.length - loopRaw.length);
  expect(rendered.length - loopRaw.length).toBeGreaterThanOrEqual(0);
  const recentFrom = recentStepsFrom(shape, Math.max(1, keepRecentSteps), raw.length) - shape.loopStart;
  loopRaw.forEach((m, i) => {
    const sent = loopSent[i]!;
    if (isAssistant(m) || !isToolResult(m)) return expect(sent).toBe(m);
    if (i >= recentFrom) return expect(sent).toBe(m);
    expect(isToolResult(sent)).toBe(true);
    const { content: _a, ...fields } = m;
    const { content: _b, ...sentFields } = sent as typeof m;
    expect(sentFields).toEqual(fields);
  });
  const before = pairToolCalls(raw);
  const after = pairToolCalls(rendered);
  const unanswered = new Set(before.unansweredCalls.map((c) => c.key));
  expect(after.unansweredCalls.filter((c) => !unanswered.has(c.key))).toEqual([]);
  expect(after.orphanResults.length).toBeLessThanOrEqual(before.orphanResults.length);
}

describe("flushes inside a running loop (property)", () => {
  test("the current loop's thinking, calls and pairs go back untouched; its recent steps byte for byte", () => {
    fc.assert(
      fc.property(longLoopSessionSpec, fc.constantFrom<Gate>("off", "warm", "cold"), fc.integer({ min: 1, max: 4 }), (spec, gate, keep) => {
        const session = buildSession(spec);
        const settings = settingsFor(gate, keep);
        const first = deepFreeze([...session.history, ...session.loop]);
        if (!loopShapeOf(first).running) return;
        let state = loopFlush(initialEngineState(), first, settings, gate);
        checkLoop(first, keeperRender({ messages: first, state: state.keeper, settings, model: MODEL }), keep);
        const second = deepFreeze([...first, ...session.tail]);
        state = loopFlush(state, second, settings, gate);
        checkLoop(second, keeperRender({ messages: second, state: state.keeper, settings, model: MODEL }), keep);
      }),
      { numRuns: 200 },
    );
  });

  test("the older steps of a long loop are stubbed (the property is not vacuous)", () => {
    let stubbedSomewhere = 0;
    fc.assert(
      fc.property(longLoopSessionSpec, (spec) => {
        const session = buildSession(spec);
        const settings = settingsFor("cold", 3);
        const branch = [...session.history, ...session.loop];
        if (!loopShapeOf(branch).running) return;
        const state = loopFlush(initialEngineState(), branch, settings, "cold");
        const rendered = keeperRender({ messages: branch, state: state.keeper, settings, model: MODEL });
        if (JSON.stringify(rendered.slice(rendered.length - (branch.length - loopShapeOf(branch).loopStart))).includes("[context-keeper] output pruned")) stubbedSomewhere++;
      }),
      { numRuns: 100, seed: 22 },
    );
    expect(stubbedSomewhere).toBeGreaterThan(10);
  });
});
