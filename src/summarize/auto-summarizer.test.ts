/**
 * `summarizer.mode: "auto"` at the host's edge (src/host/summarize-effect.ts over the engine's
 * `summaryRoutes`): which batches reach the model, with the request facts of the cache ledger.
 */
import { describe, expect, test } from "bun:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { BatchSummary, ToolBatch } from "./batch.ts";
import { batchContentHash } from "./model-summarizer.ts";
import { chooseSummarySourceForBatch } from "./summary-choice.ts";
import { summarizeForFlush } from "../host/summarize-effect.ts";
import { expectedRequestsOf, summaryRoutes, type RequestFacts } from "../engine/index.ts";
import { fakeComplete, resultMessage, scriptedStream } from "../../test/support/summarize/fake-model.ts";

const TTL_5M = 5 * 60 * 1000;

function batch(key: string, chars: number): ToolBatch {
  const text = Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `line ${i} of ${key} ......................`.slice(0, 39)).join("\n").slice(0, chars);
  return {
    batchKey: key,
    assistantTimestamp: 1,
    calls: [{ occurrenceKey: `${key}#0`, toolCallId: key, toolName: "read", arguments: { path: `src/${key}.ts` }, resultText: text, isError: false, assistantTimestamp: 1, resultTimestamp: 2 }],
  };
}

const big = batch("big", 31_000); // R = 9715 (the prompt sends head and tail only): pays from N ≈ 11.5
const medium = batch("medium", 3_100); // R = 1000: pays from N ≈ 24.4
/** 40 requests 10 s apart: 39 warm gaps, q = 40/41, F = min(30, 40) = 30. */
const longWarm: RequestFacts = { requestTimes: Array.from({ length: 40 }, (_, i) => i * 10_000), ttlMs: TTL_5M };

const withMode = (mode: KeeperSettings["summarizer"]["mode"]): KeeperSettings => ({ ...DEFAULT_SETTINGS, summarizer: { ...DEFAULT_SETTINGS.summarizer, mode } });

function fakeCtx() {
  const { complete, calls } = fakeComplete(() => scriptedStream(resultMessage("[1] read src/x.ts: a file of numbered lines.", { input: 500, output: 20 })));
  const ctx = { model: "session-model", modelRegistry: { streamSimple: complete, find: () => undefined } } as unknown as ExtensionContext;
  return { ctx, calls };
}

async function run(settings: KeeperSettings, batches: ToolBatch[], requestFacts?: RequestFacts, cache = new Map<string, BatchSummary>()) {
  const { ctx, calls } = fakeCtx();
  // The routes as the engine's `summarize` effect carries them (a cached identical batch is free).
  const routes = summaryRoutes({ settings, batches, requestFacts, cached: (b) => cache.has(batchContentHash(b)) });
  const summaries = await summarizeForFlush({ ctx, settings, batches, routes, cache, signal: new AbortController().signal, onProgress: () => {}, onNotice: () => {} });
  return { summaries, calls };
}

describe("auto: the horizon decides per batch", () => {
  test("N from the cache discipline's request horizon", () => {
    // N = 1 + q(1 − q^30)/(1 − q) = 1 + 40 × (1 − (40/41)^30) ≈ 1 + 40 × 0.5233 ≈ 21.93
    const n = expectedRequestsOf(longWarm, DEFAULT_SETTINGS)!;
    expect(n).toBeCloseTo(1 + 40 * (1 - (40 / 41) ** 30), 9);
    expect(n).toBeGreaterThan(21.9);
    expect(n).toBeLessThan(22);
    expect(chooseSummarySourceForBatch(big, { expectedRequests: n }).source).toBe("model");
    expect(chooseSummarySourceForBatch(medium, { expectedRequests: n }).source).toBe("extractive");
    // The horizon's cap comes from cache.horizonCap: capped at 5, N ≤ 6 and even the big batch stays extractive.
    const capped = { ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, horizonCap: 5 } };
    expect(expectedRequestsOf(longWarm, capped)!).toBeLessThan(6);
  });

  test("one model call for the batch that pays, the deterministic summary for the other, order kept", async () => {
    const { summaries, calls } = await run(withMode("auto"), [medium, big], longWarm);
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0].context)).toContain("src/big.ts");
    expect(summaries.map((s) => [s.batchKey, s.source])).toEqual([
      ["medium", "extractive"],
      ["big", "model"],
    ]);
    expect(summaries[0].cost).toBe(0);
  });

  test("no request facts: conservative, no model call", async () => {
    const { summaries, calls } = await run(withMode("auto"), [medium, big]);
    expect(calls).toHaveLength(0);
    expect(summaries.map((s) => s.source)).toEqual(["extractive", "extractive"]);
  });

  test("a short session: no model call even for the big batch", async () => {
    // 5 requests: q = 5/6, F = 5, N = 1 + 5 × (1 − (5/6)^5) ≈ 3.0 < 11.5
    const short: RequestFacts = { requestTimes: [0, 10_000, 20_000, 30_000, 40_000], ttlMs: TTL_5M };
    const { calls } = await run(withMode("auto"), [big], short);
    expect(calls).toHaveLength(0);
  });

  test("an identical batch already summarized by the model reuses it for free", async () => {
    const cache = new Map<string, BatchSummary>([[batchContentHash(medium), { batchKey: "earlier", text: "cached model summary", source: "model", inputTokens: 9, outputTokens: 9, cost: 1 }]]);
    expect(summaryRoutes({ settings: withMode("auto"), batches: [medium], requestFacts: longWarm, cached: (b) => cache.has(batchContentHash(b)) })).toEqual([true]);
    const { summaries, calls } = await run(withMode("auto"), [medium], longWarm, cache);
    expect(calls).toHaveLength(0);
    expect(summaries[0]).toMatchObject({ source: "model", text: "cached model summary", cost: 0 });
  });
});

describe("model and extractive modes are unchanged", () => {
  test("model asks for every batch, whatever the horizon", async () => {
    const { summaries, calls } = await run(withMode("model"), [medium, big]);
    expect(calls).toHaveLength(2);
    expect(summaries.map((s) => s.source)).toEqual(["model", "model"]);
  });

  test("extractive never calls", async () => {
    const { calls } = await run(withMode("extractive"), [medium, big], longWarm);
    expect(calls).toHaveLength(0);
  });

  test("extractive is the default (auto is opt-in: bench/wire measured it costlier)", () => {
    expect(DEFAULT_SETTINGS.summarizer.mode).toBe("extractive");
  });
});
