/**
 * A flush's gate counts no more future requests than are left before a compaction replaces the
 * prefix (`requestsUntilCompaction`, from async compaction's outlook in the same engine state):
 * a rewrite must pay back before then.
 */
import { describe, expect, test } from "bun:test";
import { requestsUntilCompaction } from "../compaction/cooperation.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import type { DisciplineFacts } from "./decide.ts";
import { effectOf, initialEngineState, step, type EngineState } from "./index.ts";

const SONNET = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const big = (tag: string) => Array.from({ length: 150 }, (_, i) => `${tag} row ${i}`.padEnd(39, ".")).join("\n");
/** Requests every 10 s: the horizon estimate alone counts far more than 3 more of them. */
const facts = (tokens: number): DisciplineFacts => ({ requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold: false, ttl: "5m", ttlMs: 300_000, seamActive: false, context: { tokens, window: 110_000 } });

function plannedHorizon(state: EngineState, tokens: number): number | undefined {
  const branch: ContextMessage[] = [user("p1", 1)];
  for (let i = 0; i < 3; i++) branch.push(assistant([call(`r${i}`, "read", { path: `r${i}.ts` })], 2 + 2 * i), result(`r${i}`, "read", big(`r${i}`), 3 + 2 * i));
  const closing = assistant([text("done")], 20);
  const begun = step(state, { type: "flush-begin", settings: DEFAULT_SETTINGS, model: SONNET, branchMessages: branch, closingMessage: closing });
  const { capture } = effectOf(begun, "summarize");
  const planned = step(begun.state, {
    type: "flush-plan",
    settings: DEFAULT_SETTINGS,
    model: SONNET,
    branchMessages: branch,
    closingMessage: closing,
    summaries: capture.batches.map((b) => summarizeExtractively(b)),
    now: 200_000,
    facts: facts(tokens),
    label: "test",
  });
  return effectOf(planned, "write-spills").result.outcome?.expectedRequests;
}

describe("the gate's horizon before a compaction", () => {
  test("requestsUntilCompaction: the turns until the context, growing as lately, reaches where a compaction applies", () => {
    expect(requestsUntilCompaction({ job: "none", handoffs: 0, applyFrom: 90_000, growthPerTurn: 4_000 }, 78_000)).toBe(3);
    expect(requestsUntilCompaction({ job: "none", handoffs: 0, applyFrom: 90_000, growthPerTurn: 4_000 }, 95_000)).toBe(1);
    expect(requestsUntilCompaction({ job: "none", handoffs: 0, applyFrom: 90_000, growthPerTurn: 0 }, 78_000)).toBeUndefined();
    expect(requestsUntilCompaction({ job: "none", handoffs: 0 }, 78_000)).toBeUndefined();
    expect(requestsUntilCompaction(undefined, 78_000)).toBeUndefined();
  });

  test("a flush three turns before the apply point counts three requests; with no compaction foreseen, its own estimate", () => {
    const plain = initialEngineState();
    const near: EngineState = { ...plain, compaction: { ...plain.compaction, applyFrom: 90_000, growthPerTurn: 4_000 } };
    const free = plannedHorizon(plain, 78_000);
    expect(free).toBeGreaterThan(3);
    const capped = plannedHorizon(near, 78_000)!;
    expect(capped).toBeLessThanOrEqual(3);
    expect(capped).toBeGreaterThan(2);
    // Far from it (slow growth), the cap does not bind.
    const slow: EngineState = { ...plain, compaction: { ...plain.compaction, applyFrom: 90_000, growthPerTurn: 500 } };
    expect(plannedHorizon(slow, 10_000)).toBe(free);
  });

  test("an in-loop flush forecasts the compaction from the context it leaves (its candidates pruned), as its trigger did", () => {
    const running: ContextMessage[] = [user("p1", 1)];
    for (let i = 0; i < 20; i++) {
      const output = i < 4 ? Array.from({ length: 8 }, () => big(`r${i}`)).join("\n") : `ok ${i}`;
      running.push(assistant([call(`r${i}`, "read", { path: `r${i}.ts` })], 2 + 2 * i), result(`r${i}`, "read", output, 3 + 2 * i));
    }
    const plain = initialEngineState();
    const near: EngineState = { ...plain, compaction: { ...plain.compaction, applyFrom: 100_000, growthPerTurn: 2_000 } };
    const planned = (trigger: "loop" | undefined) => {
      const begun = step(near, { type: "flush-begin", settings: DEFAULT_SETTINGS, model: SONNET, branchMessages: running, ...(trigger ? { trigger } : {}) });
      const { capture } = effectOf(begun, "summarize");
      const out = step(begun.state, { type: "flush-plan", settings: DEFAULT_SETTINGS, model: SONNET, branchMessages: running, summaries: capture.batches.map((b) => summarizeExtractively(b)), now: 200_000, facts: facts(90_000), label: "test" });
      return effectOf(out, "write-spills").result.outcome?.expectedRequests;
    };
    // From 90k: 5 turns left, the gate counts at most 5 requests.
    expect(planned(undefined)!).toBeLessThanOrEqual(5);
    // The loop's ~45k of old reads pruned: 28 turns left, the cap no longer binds below the loop's own estimate.
    expect(planned("loop")!).toBeGreaterThan(5);
  });
});
