/**
 * The recording wins over the price list: a model the registry prices cache writes for, whose
 * recording shows reads but never a write (an OpenAI model on a route that reports no
 * `cache_write_tokens`), is replayed with the newly cached part as plain input; a model whose
 * recording shows no cache use at all is replayed without a cache. Checked on the rule itself
 * and on a generated session through the whole report.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { analyzeRun } from "../cache/analyzer.ts";
import { costModelFor } from "../cache/cost-model.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { generateProviderSession, type ProviderModel } from "../../test/support/report/provider-session.ts";
import { ARMS } from "./arms.ts";
import { registryCostModels } from "./cli/model-prices.ts";
import { costModelAsRecorded, MIN_EVIDENCE, recordedCacheUse } from "./recorded-cache-use.ts";
import { reportSession } from "./session-report.ts";

const tmp = mkdtempSync(join(tmpdir(), "keeper-recorded-cache-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SOL: ProviderModel = { provider: "openai", api: "openai-responses", id: "gpt-6-sol", rule: "openai" };
const ref = { provider: SOL.provider, api: SOL.api, model: SOL.id };
const priced = costModelFor({ ref, registryCost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 } });
const usage = (input: number, cacheRead: number, cacheWrite: number) => ({ ref, recorded: { input, cacheRead, cacheWrite } });

describe("costModelAsRecorded", () => {
  test("reads but no writes on a model priced for writes: no write premium, writes reported as input, and a note", () => {
    expect(priced.rule.writePremium).toBe(true);
    const use = recordedCacheUse([usage(3000, 0, 0), usage(200, 2900, 0), usage(300, 3100, 0)]).get(`${ref.provider}\u0000${ref.api}\u0000${ref.model}`);
    const out = costModelAsRecorded(priced, use);
    expect(out.costModel.rule).toMatchObject({ writePremium: false, writesReported: false });
    expect(out.costModel.pricing.write5m).toBe(1);
    expect(out.note).toBe("gpt-6-sol: the recording shows cache reads but no cache writes in 3 requests although the registry prices them at $2.5 per M: newly cached tokens counted as plain input, as recorded");
  });
  test("no cache use at all: replayed without a cache", () => {
    const use = recordedCacheUse([usage(3000, 0, 0), usage(3200, 0, 0), usage(3500, 0, 0)]).get(`${ref.provider}\u0000${ref.api}\u0000${ref.model}`);
    const out = costModelAsRecorded(priced, use);
    expect(out.costModel.rule.minCacheableTokens).toBe(Number.POSITIVE_INFINITY);
    expect(out.note).toContain("no cache reads or writes in 3 requests");
    // The analyzer then reads and writes nothing.
    const body: WireRequestBody = { messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(20_000), cache_control: { type: "ephemeral" } }] }] };
    const rule = { ...out.costModel.rule, ttlMs: 300_000 };
    const a = analyzeRun([0, 1000].map((timestamp) => ({ body, timestamp, cacheRule: rule })));
    expect(a.map((x) => [x.read, x.write])).toEqual([[0, 0], [0, 0]]);
  });
  test("a recorded write, too little evidence, or a rule without write premium: unchanged", () => {
    const key = `${ref.provider}\u0000${ref.api}\u0000${ref.model}`;
    expect(costModelAsRecorded(priced, recordedCacheUse([usage(3000, 0, 10), usage(200, 2900, 0), usage(300, 3100, 0)]).get(key)).note).toBeUndefined();
    const few = Array.from({ length: MIN_EVIDENCE - 1 }, () => usage(3000, 100, 0));
    expect(costModelAsRecorded(priced, recordedCacheUse([...few, usage(500, 0, 0)]).get(key)).note).toBeUndefined();
    const unpriced = costModelFor({ ref, registryCost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 0 } });
    expect(costModelAsRecorded(unpriced, recordedCacheUse([usage(3000, 0, 0), usage(200, 2900, 0), usage(300, 3100, 0)]).get(key)).costModel).toBe(unpriced);
  });
  test("explicit marks (Anthropic) without a single recorded write: written tokens come out as uncached", () => {
    const claude = costModelFor({ ref: { provider: "proxy", api: "anthropic-messages", model: "claude-sonnet-4-5" } });
    const cref = claude.ref;
    const use = recordedCacheUse([0, 1, 2].map(() => ({ ref: cref, recorded: { input: 300, cacheRead: 2000, cacheWrite: 0 } }))).get(`proxy\u0000anthropic-messages\u0000claude-sonnet-4-5`);
    const rule = { ...costModelAsRecorded(claude, use).costModel.rule, ttlMs: 300_000 };
    const body: WireRequestBody = { messages: [{ role: "user", content: [{ type: "text", text: "y".repeat(20_000), cache_control: { type: "ephemeral" } }] }] };
    const [a] = analyzeRun([{ body, timestamp: 0, cacheRule: rule }]);
    expect(a.write).toBe(0);
    expect(a.uncached).toBe(a.totalTokens);
  });
});

describe("a generated gpt-6-sol session (the registry prices writes; the usage, as OpenAI's, shows none)", () => {
  const s = generateProviderSession({ seed: 5, models: [SOL], prompts: 6, dir: tmp });
  const arms = ARMS.filter((a) => a.name === "bare" || a.name === "keeper");
  const asPriced = reportSession({ file: s.file, text: s.text, arms, summaries: "size-model", costModels: (r) => costModelFor({ ref: r, registryCost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 } }) }).report;
  const withRegistry = reportSession({ file: s.file, text: s.text, arms, summaries: "size-model", costModels: registryCostModels() }).report;

  test("the registry does price gpt-6-sol's writes, and the recording has reads and no writes", () => {
    expect(withRegistry.models[0]?.prices.cache_write).toBeGreaterThan(0);
    expect(s.totals.cacheWrite).toBe(0);
    expect(s.totals.cacheRead).toBeGreaterThan(0);
  });
  test("calibrated within 10% because the recording wins, and the report says so", () => {
    for (const r of [asPriced, withRegistry]) {
      expect(r.calibration.total_error).toBeLessThan(0.1);
      expect(r.arms.bare.write).toBe(0);
      expect(r.models[0]?.note).toContain("no cache writes");
      expect(r.models[0]?.cache_rule).toContain("no cache writes in the recording");
      expect(Math.abs(r.money.replayed_paid_usd / r.money.paid_usd - 1)).toBeLessThan(0.1);
    }
  });
});
