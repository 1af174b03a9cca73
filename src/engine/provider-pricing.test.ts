/**
 * The session model's cost model through the engine: the cache facts the live host and the
 * replay both build (`cacheFacts`) carry it, and the flush gate prices a rewrite with it. On
 * OpenAI (automatic prefix caching, no write premium) a rewrite re-sends at plain input price,
 * so a flush Anthropic's 1.25× write defers can pay; entries live 10 minutes, not 5.
 */
import { describe, expect, test } from "bun:test";
import { ruleTtlMs } from "../cache/cache-rules.ts";
import { costModelFor, type CostModel } from "../cache/cost-model.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { ToolBatch } from "../summarize/batch.ts";
import { emptyState } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { cacheFacts, emptyCacheLedger, type CacheLedger } from "./cache-ledger.ts";
import { finishFlush } from "./flush.ts";
import { summaryRoutes } from "./summary-choice.ts";

const settings: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } } };
const sonnet = costModelFor({ ref: { provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" }, registryCost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
const gpt = costModelFor({ ref: { provider: "openai", api: "openai-responses", model: "gpt-5.5" }, registryCost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 } });
const gemini = costModelFor({ ref: { provider: "google", api: "google-generative-ai", model: "gemini-2.5-pro" } });

const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);

// A 40 KB read, its answer, then sixteen prompt/answer pairs of 8 KB each: the stub saves ~10k
// tokens per later read and its rewrite re-sends ~62k tokens after it, which Anthropic's write
// premium makes too dear and OpenAI's plain re-send does not.
const branch: ContextMessage[] = [user("look at a.ts", 1), assistant([call("a", "read", { path: "a.ts" })], 2), result("a", "read", lines("a", 40_000), 3), assistant([text("a.ts read")], 4)];
for (let i = 0; i < 16; i++) branch.push(user(lines(`q${i}`, 8000), 10 + 2 * i), assistant([text(lines(`r${i}`, 8000))], 11 + 2 * i));

/** A ledger with 20 requests 10 s apart on `model`, the last one 10 s before `now`. */
function warmLedger(model: string): CacheLedger {
  const times = Array.from({ length: 20 }, (_, i) => i * 10_000);
  return { ...emptyCacheLedger(), requestTimes: times, lastKey: { at: times[times.length - 1]!, model, thinkingLevel: "medium", toolsDigest: "read" } };
}

function factsAt(costModel: CostModel, now: number) {
  const model = `${costModel.ref.provider}/${costModel.ref.model}`;
  return cacheFacts(warmLedger(model), { current: { at: now, model, thinkingLevel: "medium", toolsDigest: "read" }, ttlMs: ruleTtlMs(costModel.rule, false), costModel });
}

function gateOf(costModel: CostModel) {
  const facts = factsAt(costModel, 200_000);
  const done = finishFlush({
    state: emptyState(),
    branchMessages: branch,
    settings,
    model: { provider: costModel.ref.provider, id: costModel.ref.model, api: costModel.ref.api },
    summaries: [{ batchKey: "batch:a@2", text: "a.ts: a module of numbered lines", source: "model", inputTokens: 1, outputTokens: 1, cost: 0 }],
    now: 1_000_000,
    discipline: { cache: settings.cache, facts, label: "provider flush" },
  });
  return { facts, plan: done.plan, decision: done.outcome!.log[0]!.decision };
}

describe("cache facts carry the session model's cost model", () => {
  test("the rule's lifetime: OpenAI entries live 10 minutes, Anthropic's 5; the facts keep the cost model", () => {
    expect(factsAt(gpt, 0).ttlMs).toBe(10 * 60_000);
    expect(factsAt(sonnet, 0).ttlMs).toBe(5 * 60_000);
    expect(factsAt(gpt, 0).costModel).toBe(gpt);
    expect(factsAt(gpt, 0).ttl).toBe("5m");
  });
  test("a 7-minute gap is cold on Anthropic and still warm on OpenAI", () => {
    const at = 190_000 + 7 * 60_000;
    expect(factsAt(sonnet, at).cold).toBe(true);
    expect(factsAt(gpt, at).cold).toBe(false);
  });
  test("without a cost model the facts carry none (the gate falls back to Anthropic's prices)", () => {
    const f = cacheFacts(emptyCacheLedger(), { current: { at: 0, model: "m", thinkingLevel: "", toolsDigest: "" }, ttlMs: 300_000 });
    expect("costModel" in f).toBe(false);
  });
});

describe("the flush gate prices a rewrite with the facts' cost model", () => {
  test("Anthropic: the rewrite is written at 1.25×, the stub waits; OpenAI: re-sent at 1×, the stub applies", () => {
    const a = gateOf(sonnet);
    const o = gateOf(gpt);
    expect(a.decision.numbers.writePrice).toBe(1.25);
    expect(a.decision.numbers.writePremium).toBe(true);
    expect(a.decision.reason).toBe("defers");
    expect(a.plan.nextState.frontier.stubbedKeys).toEqual([]);
    expect(o.decision.numbers.writePrice).toBe(1);
    expect(o.decision.numbers.writePremium).toBe(false);
    expect(o.decision.numbers.cacheRule).toBe(gpt.rule.label);
    expect(o.decision.reason).toBe("pays");
    expect(o.plan.nextState.frontier.stubbedKeys).toEqual(["a@2#0"]);
    // Re-sent from the change itself on OpenAI (every prefix is cached: the prompt and the call
    // before the stub are read), from the start of the messages on Anthropic (no mark reaches
    // back to them); cheaper per token: (1 − 0.1) against (1.25 − 0.1).
    const an = a.decision.numbers;
    const on = o.decision.numbers;
    expect(on.rewrittenTokens).toBeLessThan(an.rewrittenTokens);
    expect(an.rewrittenTokens - on.rewrittenTokens).toBeLessThan(50);
    expect(on.rewriteCost / on.rewrittenTokens).toBeCloseTo(((an.rewriteCost / an.rewrittenTokens) * 0.9) / 1.15, 6);
  });
  test("Google (no write premium either) prices like OpenAI", () => {
    const g = gateOf(gemini);
    expect(g.decision.numbers.writePremium).toBe(false);
    expect(g.decision.numbers.writePrice).toBe(1);
  });
});

describe("summary routes under `auto` use the facts' prices", () => {
  const auto: KeeperSettings = { ...settings, summarizer: { ...settings.summarizer, mode: "auto" } };
  const batches: ToolBatch[] = [60_000, 30_000, 15_000, 8_000, 4_000, 2_000].map((chars, i) => ({
    batchKey: `batch:b${i}@${i}`,
    assistantTimestamp: i,
    calls: [{ occurrenceKey: `b${i}@${i}#0`, toolCallId: `b${i}`, toolName: "read", arguments: { path: `b${i}.ts` }, resultText: lines(`b${i}`, chars), isError: false, assistantTimestamp: i, resultTimestamp: i + 0.5 }],
  }));
  const routes = (costModel: CostModel | undefined) =>
    summaryRoutes({ settings: auto, batches, requestFacts: { requestTimes: Array.from({ length: 40 }, (_, i) => i * 5_000), ttlMs: 300_000, ...(costModel ? { costModel } : {}) } });

  test("Anthropic's registry prices route as the default does", () => {
    expect(routes(sonnet)).toEqual(routes(undefined));
  });
  test("a dearer summarizer output sends strictly fewer batches to the model, never one the default keeps extractive", () => {
    const dear: CostModel = { ...gpt, pricing: { ...gpt.pricing, output: 40 } };
    const d = routes(dear);
    const s = routes(undefined);
    expect(d.filter(Boolean).length).toBeLessThan(s.filter(Boolean).length);
    d.forEach((viaModel, i) => {
      if (viaModel) expect(s[i]).toBe(true);
    });
  });
});
