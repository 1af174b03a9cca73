/**
 * What the flush gate tells Pi's cache warming (`outcome.unsent`, `outcome.pending`): where the
 * next request rewrites the cached prefix — the part this flush applied, which goes out with the
 * next request — and where the part it held back starts. Pi's warm replays the last request, so
 * only the cached tokens before the rewrite are worth a refresh.
 */
import { describe, expect, test } from "bun:test";
import type { DisciplineFacts } from "./decide.ts";
import { finishFlush } from "./flush.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const settings: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } } };
const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);
const summary = (batchKey: string, t: string): BatchSummary => ({ batchKey, text: t, source: "model", inputTokens: 10, outputTokens: 5, cost: 0 });
const read = (id: string, ts: number, chars: number): ContextMessage[] => [assistant([call(id, "read", { path: `${id}.ts` })], ts), result(id, "read", lines(id, chars), ts + 1)];
const facts: DisciplineFacts = { requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold: false, ttl: "5m", ttlMs: 5 * 60_000, seamActive: false };

function outcomeOf(branch: ContextMessage[], summaries: BatchSummary[]) {
  return finishFlush({ state: emptyState(), branchMessages: branch, settings, model: MODEL, summaries, now: 1_000_000, discipline: { cache: settings.cache, facts, label: "test flush" } }).outcome!;
}

describe("the gate's word to cache warming", () => {
  test("an applied rewrite: unsent names what the next request keeps of the cached prefix", () => {
    // 20k tokens of chatter, then a loop whose two big outputs the flush stubs (they pay).
    const chatter: ContextMessage[] = [];
    for (let i = 0; i < 10; i++) chatter.push(user(lines(`q${i}`, 4000), 10 + 2 * i), assistant([text(lines(`a${i}`, 4000))], 11 + 2 * i));
    const branch = [...chatter, user("read b and c", 40), ...read("b", 41, 40_000), ...read("c", 43, 40_000), assistant([text("both read")], 45)];
    const out = outcomeOf(branch, [summary("batch:b@41", "b.ts"), summary("batch:c@43", "c.ts")]);
    expect(out.applied.length).toBeGreaterThan(0);
    expect(out.unsent).toBeDefined();
    const u = out.unsent!;
    // The chatter before the loop survives; the loop's 20k tokens do not.
    expect(u.keptPrefixTokens).toBeGreaterThan(15_000);
    expect(u.cachedPrefixTokens - u.keptPrefixTokens).toBeGreaterThan(15_000);
    expect(out.pending).toBeUndefined();
  });

  test("nothing applied: nothing unsent", () => {
    const branch = [user("hi", 1), assistant([text("hello")], 2)];
    expect(outcomeOf(branch, []).unsent).toBeUndefined();
  });
});
