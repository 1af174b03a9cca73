/**
 * The flush gate on a model whose reasoning is bound to its prefix (`costModel.reasoningBound`,
 * reasoning-cost.ts): a rewrite also costs the thinking after its first change, at the output
 * price, on a cold cache too. The same drafts as on a model without bound reasoning, side by side.
 */
import { describe, expect, test } from "bun:test";
import { costModelFor } from "../cache/cost-model.ts";
import type { DisciplineFacts } from "./decide.ts";
import { finishFlush } from "./flush.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";

// Sonnet 4.5's thinking policy keeps the strip off, so every thinking block stays in the history.
const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const REF = { provider: "anthropic", api: "anthropic-messages", model: "claude-opus-5" };
const BOUND = costModelFor({ ref: REF, registryCost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }, compat: { supportsMidConvoEffort: true } });
const FREE = costModelFor({ ref: REF, registryCost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } });
const settings: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } } };

const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);
const summary = (batchKey: string, t: string): BatchSummary => ({ batchKey, text: t, source: "model", inputTokens: 10, outputTokens: 5, cost: 0 });
const read = (id: string, ts: number, chars: number): ContextMessage[] => [assistant([thinking(lines(`why ${id}`, 600)), call(id, "read", { path: `${id}.ts` })], ts), result(id, "read", lines(id, chars), ts + 1)];

function facts(costModel: DisciplineFacts["costModel"], cold: boolean): DisciplineFacts {
  return { requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold, ttl: "5m", ttlMs: 5 * 60_000, seamActive: false, costModel };
}

function flush(branch: ContextMessage[], summaries: BatchSummary[], f: DisciplineFacts) {
  const done = finishFlush({ state: emptyState(), branchMessages: branch, settings, model: MODEL, summaries, now: 1_000_000, discipline: { cache: settings.cache, facts: f, label: "test flush" } });
  return { plan: done.plan, outcome: done.outcome! };
}

describe("the gate prices reasoning bound to its prefix", () => {
  // An early read of 2,000 chars, then 25 answered prompts whose answers carry 2,000 chars of thinking each.
  const deep: ContextMessage[] = [user("look at a.ts", 1), ...read("a", 2, 2000), assistant([text("a.ts is fine")], 4)];
  for (let i = 0; i < 25; i++) deep.push(user(`q${i}`, 10 + 2 * i), assistant([thinking(lines(`t${i}`, 2000)), text(`a${i}`)], 11 + 2 * i));
  const deepSummaries = [summary("batch:a@2", "a.ts: a small module")];

  test("cold cache: the stub is free to write but would drop every later answer's thinking: it waits on the bound model, applies on the other", () => {
    const free = flush(deep, deepSummaries, facts(FREE, true));
    expect(free.outcome.verdicts["stub:a@2#0"]).toBe("pays-alone");
    expect(free.outcome.log[0]!.decision.numbers.reasoningDropped).toBeUndefined();

    const bound = flush(deep, deepSummaries, facts(BOUND, true));
    expect(bound.outcome.verdicts["stub:a@2#0"]).toBe("deferred");
    expect(bound.plan.nextState.frontier.stubbedKeys).toEqual([]);
    const n = bound.outcome.log[0]!.decision.numbers;
    expect(bound.outcome.log[0]!.decision.reason).toBe("cold-cache");
    expect(n.rewriteCost).toBe(0);
    // 25 answers × 500 thinking tokens, at Opus 5's output price (5× input).
    expect(n.reasoningDropped).toBe(25 * 500);
    expect(n.reasoningCost).toBe(25 * 500 * 5);
    expect(n.net).toBeCloseTo(n.saving - n.reasoningCost!, 6);
  });

  test("warm: the loop that just ended still pays on its own; the thinking after its first change is counted", () => {
    const branch = [user("read b and c", 1), ...read("b", 2, 40_000), ...read("c", 4, 40_000), assistant([thinking(lines("both", 400)), text("both read")], 6)];
    const summaries = [summary("batch:b@2", "b.ts"), summary("batch:c@4", "c.ts")];
    const { plan, outcome } = flush(branch, summaries, facts(BOUND, false));
    expect(plan.nextState.frontier.stubbedKeys.sort()).toEqual(["b@2#0", "c@4#0"]);
    const n = outcome.log[0]!.decision.numbers;
    expect(outcome.log[0]!.decision.reason).toBe("pays");
    // The loop collapses into its chain summary from b's call on (its calls' thinking goes with it,
    // a removal): what drops is the thinking after it, the answer's 100 tokens.
    expect(outcome.log[0]!.mutationIds).toContain("chain:batch:b@2");
    expect(n.reasoningDropped).toBe(100);
    expect(n.reasoningCost).toBe(500);
    expect(n.net).toBeGreaterThan(0);
  });
});
