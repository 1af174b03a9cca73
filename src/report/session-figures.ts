/**
 * Per-session figures of the report that read a replay: costs in billed-equivalent units and
 * in dollars (each request at its own model's prices), the models with their rules, prices and
 * own calibration, and the calibration summary with the estimator that was used.
 */
import { dollarsOf } from "../cache/cost-model.ts";
import { billedEquivalent } from "../cache/pricing.ts";
import { calibrate } from "./calibration.ts";
import type { ReplayResult } from "./replay.ts";
import type { SessionCalibration, SessionModelInfo } from "./session-report.ts";

/** Input cost of a run in billed-equivalent units, each request at its own model's ratios. */
export function inputCost(r: ReplayResult): number {
  return r.analysis.reduce((n, a, i) => n + billedEquivalent({ ...a, output: 0 }, r.requests[i].costModel.pricing), 0);
}

export function outputCost(r: ReplayResult): number {
  return r.analysis.reduce((n, a, i) => n + a.output * r.requests[i].costModel.pricing.output, 0);
}

export function dollars(r: ReplayResult, withOutput: boolean): number {
  return r.analysis.reduce((n, a, i) => n + dollarsOf({ ...a, output: withOutput ? a.output : 0 }, r.requests[i].costModel), 0);
}

/** Each request's dollars in the replay (input and output at its model's prices). */
export function requestDollars(r: ReplayResult): number[] {
  return r.analysis.map((a, i) => dollarsOf(a, r.requests[i].costModel));
}

/** What the provider billed each request by its recorded usage, at the same prices (writes as 5-minute writes). */
export function recordedRequestDollars(r: ReplayResult): number[] {
  return r.requests.map((q) => dollarsOf({ uncached: q.recorded.input, write5m: q.recorded.cacheWrite, write1h: 0, read: q.recorded.cacheRead, output: q.recorded.output }, q.costModel));
}

export function modelsOf(r: ReplayResult): SessionModelInfo[] {
  const byKey = new Map<string, SessionModelInfo>();
  for (const q of r.requests) {
    const key = `${q.provider}/${q.api}/${q.model}`;
    const known = byKey.get(key);
    if (known) {
      known.requests++;
      continue;
    }
    const m = q.costModel;
    byKey.set(key, {
      provider: q.provider,
      api: q.api,
      model: q.model,
      requests: 1,
      cache_rule: m.rule.label,
      prices: { input: m.prices.rates.input, output: m.prices.rates.output, cache_read: m.prices.rates.cacheRead, cache_write: m.prices.rates.cacheWrite },
      price_source: m.prices.source === "registry" ? "pi-ai registry" : `fallback: ${m.prices.fallback}`,
      total_error: 0,
      estimator: familyEstimator(r, m.rule.family),
      ...noteOf(r, q),
    });
  }
  for (const info of byKey.values()) {
    const idx = r.requests.flatMap((q, i) => (q.provider === info.provider && q.api === info.api && q.model === info.model ? [i] : []));
    info.total_error = calibrate(idx.map((i) => r.analysis[i]), idx.map((i) => r.requests[i].recorded)).total_error;
  }
  return [...byKey.values()].sort((a, b) => b.requests - a.requests);
}

function noteOf(r: ReplayResult, q: { provider: string; api: string; model: string }): { note?: string } {
  const n = r.recordingNotes.find((x) => x.provider === q.provider && x.api === q.api && x.model === q.model);
  return n ? { note: n.note } : {};
}

function familyEstimator(r: ReplayResult, family: string): SessionModelInfo["estimator"] {
  const f = r.fit?.families.find((x) => x.family === family);
  if (!f || !f.all.fitted) return "fixed";
  return f.pooled ? "session fit" : "family fit";
}

/** The calibration of `r`, the replay of the arm the session was recorded with (`arm`). */
export function calibrationOf(r: ReplayResult | undefined, arm: SessionCalibration["arm"]): SessionCalibration {
  const e = r?.estimator;
  const fit = r?.fit;
  return {
    arm,
    total_error: r?.calibration.total_error ?? 0,
    prompt_size_error: r?.calibration.prompt_size_error ?? 0,
    total_error_ttl_only: r?.calibration.total_error_ttl_only ?? 0,
    total_error_cross_validated: fit?.crossValidated?.total_error ?? null,
    estimator: {
      source: fit?.all.fitted ? "per-session" : "fixed",
      ...(fit?.all.reason ? { note: fit.all.reason } : {}),
      prose_chars_per_token: e?.proseCharsPerToken ?? 0,
      code_chars_per_token: e?.codeCharsPerToken ?? 0,
      block_overhead_tokens: e?.blockOverheadTokens ?? 0,
      prompt_overhead_tokens: e?.promptOverheadTokens ?? 0,
    },
  };
}
