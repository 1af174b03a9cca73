/**
 * The in-loop trigger (`loopFlushDue`) and its step at `turn_end`: it fires when stubbing the
 * running loop's older outputs pays for the rewrite over the loop's expected remaining requests,
 * with the session model's cache rule and prices; at most once per `minStepsBetween` steps; never
 * for candidates an unmoved frozen boundary holds; after the budget trigger and with it held
 * while async compaction is about to apply.
 */
import { describe, expect, test } from "bun:test";
import { costModelFor, type CostModel } from "../cache/cost-model.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { assistant, call, result, thinking, user } from "../../test/support/message-factory.ts";
import type { DisciplineFacts } from "./decide.ts";
import { initialEngineState } from "./session.ts";
import { step } from "./step.ts";
import { loopFlushDue, loopMarkOf } from "./triggers.ts";

const sonnet = costModelFor({ ref: { provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" }, registryCost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
const gpt = costModelFor({ ref: { provider: "openai", api: "openai-responses", model: "gpt-5.2" }, registryCost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } });

const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);

/** A prompt, then tool steps with the given output sizes (the last one not answered yet). */
function loop(sizes: number[], from = 1): ContextMessage[] {
  const out: ContextMessage[] = [user("rework the cache", from)];
  sizes.forEach((chars, i) => out.push(assistant([thinking(`step ${i}: ${lines("t", 300)}`), call(`c${i}`, "read", { path: `f${i}.ts` })], from + 1 + 2 * i), result(`c${i}`, "read", lines(`f${i}`, chars), from + 2 + 2 * i)));
  return out;
}

function facts(costModel: CostModel, over: Partial<DisciplineFacts> = {}): DisciplineFacts {
  return { requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold: false, ttl: "5m", ttlMs: 300_000, seamActive: false, costModel, ...over };
}

const due = (messages: ContextMessage[], f: DisciplineFacts | undefined, over: { keeper?: KeeperState; settings?: KeeperSettings; last?: { prompt: number | undefined; steps: number } } = {}) =>
  loopFlushDue({ settings: over.settings ?? DEFAULT_SETTINGS, messages, keeper: over.keeper ?? emptyState(), facts: f, last: over.last });

// Large reads early, then small outputs: 20 steps so far.
const longLoop = loop([40_000, 40_000, 32_000, 36_000, ...Array.from({ length: 16 }, () => 1_500)]);

describe("loopFlushDue", () => {
  test("large early outputs twenty steps into a loop: stubbing them pays on Anthropic and on OpenAI", () => {
    const a = due(longLoop, facts(sonnet));
    expect(a.fire).toBe(true);
    expect(a.decision!.numbers.expectedRequests).toBe(11); // the Lindy prior: 10 more steps (two loops in three go on that long) and the final answer
    expect(a.decision!.numbers.writePremium).toBe(true);
    const o = due(longLoop, facts(gpt));
    expect(o.fire).toBe(true);
    // Automatic prefix caching: the rewrite starts at the first stub itself, not at the start of the messages.
    expect(o.decision!.numbers.rewrittenTokens).toBeLessThan(a.decision!.numbers.rewrittenTokens);
  });

  test("five steps into a loop whose last steps are large: too few requests left to repay re-writing them", () => {
    const short = loop([6_000, 12_000, 12_000, 12_000, 12_000]);
    const v = due(short, facts(sonnet));
    expect(v).toMatchObject({ fire: false, why: "does-not-pay" });
    expect(v.decision!.numbers.expectedRequests).toBe(3.5);
    // Close to the end a large output's stub is cheap to make: the lookback reads everything before it back.
    expect(due(loop([40_000, 1_500, 1_500, 1_500, 1_500]), facts(sonnet)).fire).toBe(true);
  });

  test("a cold cache: the rewrite is free, so any saving pays", () => {
    expect(due(loop([6_000, 12_000, 12_000, 12_000, 12_000]), facts(sonnet, { cold: true })).fire).toBe(true);
  });

  test("at most once per minStepsBetween steps of one loop", () => {
    const mark = loopMarkOf(longLoop)!;
    expect(mark.steps).toBe(20);
    expect(due(longLoop, facts(sonnet), { last: { prompt: mark.prompt, steps: 15 } })).toMatchObject({ fire: false, why: "spacing" });
    expect(due(longLoop, facts(sonnet), { last: { prompt: mark.prompt, steps: 14 } }).fire).toBe(true);
    // A mark of another loop does not hold this one.
    expect(due(longLoop, facts(sonnet), { last: { prompt: 999, steps: 19 } }).fire).toBe(true);
  });

  test("candidates before the frozen boundary wait until the boundary moves a grid step", () => {
    // Frozen through the last message: the branch has not grown by a grid chunk since.
    const frozen: KeeperState = { ...emptyState(), frontier: { ...emptyState().frontier, flushSeq: 1, frozenThroughTimestamp: longLoop.at(-1)!.timestamp } };
    expect(due(longLoop, facts(sonnet), { keeper: frozen })).toMatchObject({ fire: false, why: "frozen" });
    expect(due(longLoop, facts(sonnet, { cold: true }), { keeper: frozen }).fire).toBe(true);
  });

  test("off, outside a loop, or nothing old enough to prune", () => {
    const off: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, loopFlush: { ...DEFAULT_SETTINGS.pruning.loopFlush, enabled: false } } };
    expect(due(longLoop, facts(sonnet), { settings: off })).toMatchObject({ fire: false, why: "off" });
    expect(due([...longLoop, assistant([{ type: "text", text: "done" }], 999)], facts(sonnet))).toMatchObject({ fire: false, why: "not-in-loop" });
    expect(due(loop([40_000, 40_000]), facts(sonnet))).toMatchObject({ fire: false, why: "nothing-to-prune" });
  });
});

describe("turn-end step", () => {
  const at = (messages: ContextMessage[], contextTokens = 60_000) => ({
    type: "turn-end" as const,
    settings: DEFAULT_SETTINGS,
    contextTokens,
    contextWindow: 1_000_000,
    context: () => messages,
    facts: () => facts(sonnet),
  });

  test("a loop flush effect, and the loop's step marked for the spacing", () => {
    const out = step(initialEngineState(), at(longLoop));
    expect(out.effects).toEqual([{ kind: "flush", trigger: "loop" }]);
    expect(out.state.loopFlush).toEqual(loopMarkOf(longLoop));
    const again = step(out.state, at(longLoop));
    expect(again.effects).toEqual([]);
  });

  test("the budget trigger goes first (one flush), and marks the step too", () => {
    const out = step(initialEngineState(), at(longLoop, 600_000));
    expect(out.effects).toEqual([{ kind: "flush", trigger: "budget" }]);
    expect(out.state.loopFlush).toEqual(loopMarkOf(longLoop));
  });

  test("held with the budget trigger while an async compaction is about to apply", () => {
    const pending = initialEngineState();
    const state = { ...pending, compaction: { ...pending.compaction, job: { kind: "pending" } as never } };
    expect(step(state, at(longLoop)).effects).toEqual([]);
  });

  describe("a compaction foreseen from the context before the flush (the budget hold says compaction_imminent)", () => {
    // longLoop's older outputs are ~37k tokens; at 80k the context is 10 turns of 2k from 100k.
    const foreseen = (growthPerTurn: number, handoffs = 0) => {
      const s = initialEngineState();
      return { ...s, compaction: { ...s.compaction, applyFrom: 100_000, growthPerTurn, handoffs } };
    };
    const pruned = loopFlushDue({ settings: DEFAULT_SETTINGS, messages: longLoop, keeper: emptyState(), facts: facts(sonnet), last: undefined }).candidates!.tokensRemoved;

    test("the in-loop flush is evaluated on the context it would leave: beyond its payback, it replaces the compaction", () => {
      expect(pruned).toBeGreaterThan(30_000);
      const out = step(foreseen(2_000), at(longLoop, 80_000));
      expect(out.effects).toEqual([{ kind: "flush", trigger: "loop" }]);
      expect(out.state.loopFlush).toEqual(loopMarkOf(longLoop));
    });

    test("a flush that would leave the context still about to compact stays held", () => {
      expect(step(foreseen(8_000), at(longLoop, 80_000)).effects).toEqual([]);
      const v = loopFlushDue({ settings: DEFAULT_SETTINGS, messages: longLoop, keeper: emptyState(), facts: facts(sonnet), last: undefined, compaction: { outlook: { job: "none", handoffs: 0, applyFrom: 100_000, growthPerTurn: 8_000 }, contextTokens: 80_000 } });
      expect(v).toMatchObject({ fire: false, why: "compaction-imminent" });
    });

    test("the trigger's horizon is cut to the requests left after the flush (a loop whose own estimate is longer)", () => {
      // A 60-step loop: the Lindy prior alone expects more requests than the 13 turns left after the flush.
      const sixty = loop([40_000, 40_000, 32_000, 36_000, ...Array.from({ length: 56 }, () => 1_500)]);
      const free = loopFlushDue({ settings: DEFAULT_SETTINGS, messages: sixty, keeper: emptyState(), facts: facts(sonnet), last: undefined });
      expect(free.decision!.numbers.expectedRequests).toBeGreaterThan(14);
      const removed = free.candidates!.tokensRemoved;
      const contextTokens = 74_000 + removed; // after the flush: 26k below applyFrom, 13 turns of 2k
      const v = loopFlushDue({ settings: DEFAULT_SETTINGS, messages: sixty, keeper: emptyState(), facts: facts(sonnet), last: undefined, compaction: { outlook: { job: "none", handoffs: 0, applyFrom: 100_000, growthPerTurn: 2_000 }, contextTokens } });
      expect(v.fire).toBe(true);
      expect(v.decision!.numbers.expectedRequests).toBe(13); // the request about to go out and 12 after it
    });

    test("loopFlush off: held exactly as before; a compaction just applied: the turn re-bases and skips", () => {
      const off: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, loopFlush: { ...DEFAULT_SETTINGS.pruning.loopFlush, enabled: false } } };
      expect(step(foreseen(2_000), { ...at(longLoop, 80_000), settings: off }).effects).toEqual([]);
      expect(step(foreseen(2_000, 1), at(longLoop, 80_000)).effects).toEqual([]);
    });
  });

  test("without the branch (a caller that does not hand it in) only the budget trigger runs", () => {
    const { context: _c, ...rest } = at(longLoop);
    expect(step(initialEngineState(), rest).effects).toEqual([]);
  });
});
