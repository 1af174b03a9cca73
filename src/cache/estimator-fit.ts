/**
 * Per-session calibration of the char-ratio token estimator (token-estimator.ts) against the
 * prompt sizes a provider recorded (`usage.input + cacheRead + cacheWrite` per request):
 *
 *   recordedPrompt_i ≈ C + a·blocks_i + p·proseChars_i + c·codeChars_i + imageTokens·images_i
 *
 * over every block of the serialized request (tools and system included; thinking of closed
 * cycles left out when the provider drops it). C becomes `promptOverheadTokens` (the provider's
 * framing, or the whole prompt when the recording does not carry it and the request holds only
 * empty placeholders), a the per-block overhead, 1/p and 1/c the prose and code chars-per-token.
 *
 * The least squares are ridge-regularized toward the default constants with a weight of
 * 1e-3 × Σx² per feature: negligible when the session pins a feature down, decisive when two
 * features move together (a generated session whose blocks all have one size); a feature the
 * session never shows keeps its default. When the prose or code ratio falls outside 1–12
 * chars per token (little prose beside much code leaves its ratio undetermined), one ratio is
 * fitted for both (`fitted: true`, the reason says so); when that one is out of range too, or
 * with fewer than `minSamples` requests, the fit is refused and the defaults are used
 * (`fitted: false`, with the reason).
 * Pure: bodies and numbers in, numbers out.
 */
import { closedCycleBoundary } from "./analyzer.ts";
import { flattenRequest, type FlatBlock, type FlatBytesMemo } from "./flatten.ts";
import { blockPayload, DEFAULT_ESTIMATOR_OPTIONS, type CharRatioEstimatorOptions } from "./token-estimator.ts";
import type { WireRequestBody } from "./wire-types.ts";

export interface FitSample {
  body: WireRequestBody;
  /** input + cacheRead + cacheWrite the provider recorded. */
  recordedPrompt: number;
}

export interface RequestFeatures {
  blocks: number;
  prose: number;
  code: number;
  images: number;
}

export interface FitOptions {
  closedCycleThinking: "billed" | "dropped";
  /**
   * Blocks the features count: "all" (the replay's per-session fit; a constant tools + system
   * block is absorbed by C) or "messages" (the definition the fixed corpus constants were
   * fitted with: C is then the whole unknown tools + system prompt).
   */
  layers: "all" | "messages";
  /** Fewest requests a fit needs; default 6. */
  minSamples: number;
  /** Ridge weight relative to Σx² of each feature; default 1e-3. */
  ridge: number;
  /** Constants the ridge pulls toward (and the fallback). */
  prior: { estimator: CharRatioEstimatorOptions; promptOverheadTokens: number };
  /** Block bytes by block object, for bodies never mutated (the replay's); speed only. */
  bytes?: FlatBytesMemo;
}

export const DEFAULT_FIT_OPTIONS: FitOptions = {
  closedCycleThinking: "billed",
  layers: "all",
  minSamples: 6,
  ridge: 1e-3,
  prior: { estimator: DEFAULT_ESTIMATOR_OPTIONS, promptOverheadTokens: 0 },
};

export interface EstimatorFit {
  fitted: boolean;
  /** Why the defaults were kept (`fitted` false), or how the fit was simplified (`fitted` true: one ratio for prose and code). */
  reason?: string;
  estimator: CharRatioEstimatorOptions;
  promptOverheadTokens: number;
  samples: number;
  /** Root mean square residual of the prompt size, tokens. */
  rmse: number;
  /** Σ|predicted − recorded| / Σ recorded over the samples. */
  promptSizeError: number;
}

/** A block's payload by class; flat blocks are never changed once made, so it is kept per block (a replay shares them between requests). */
const payloads = new WeakMap<FlatBlock, Omit<RequestFeatures, "blocks">>();
function payloadOf(b: FlatBlock): Omit<RequestFeatures, "blocks"> {
  let sums = payloads.get(b);
  if (!sums) {
    sums = { prose: 0, code: 0, images: 0 };
    for (const p of blockPayload(b)) {
      if (p.cls === "prose") sums.prose += p.chars;
      else if (p.cls === "code") sums.code += p.chars;
      else sums.images++;
    }
    payloads.set(b, sums);
  }
  return sums;
}

export function requestFeatures(body: WireRequestBody, closedCycleThinking: FitOptions["closedCycleThinking"], layers: FitOptions["layers"] = "all", bytes?: FlatBytesMemo): RequestFeatures {
  const blocks = flattenRequest(body, bytes);
  const boundary = closedCycleThinking === "dropped" ? closedCycleBoundary(blocks) : -1;
  const f: RequestFeatures = { blocks: 0, prose: 0, code: 0, images: 0 };
  for (const b of blocks) {
    if (layers === "messages" && b.layer !== "messages") continue;
    if ((b.type === "thinking" || b.type === "redacted_thinking") && b.messageIndex < boundary) continue;
    f.blocks++;
    const p = payloadOf(b);
    f.prose += p.prose;
    f.code += p.code;
    f.images += p.images;
  }
  return f;
}

/** Solve (XᵀX + diag(λ))β = Xᵀy + λ·β0 by Gaussian elimination with partial pivoting. */
export function ridgeLeastSquares(rows: readonly number[][], y: readonly number[], lambda: readonly number[], prior: readonly number[]): number[] {
  const k = rows[0].length;
  const a = Array.from({ length: k }, (_, i) =>
    Array.from({ length: k + 1 }, (_, j) =>
      j < k ? rows.reduce((s, r) => s + r[i] * r[j], 0) + (i === j ? lambda[i] : 0) : rows.reduce((s, r, n) => s + r[i] * y[n], 0) + lambda[i] * prior[i],
    ),
  );
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let r = col + 1; r < k; r++) if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) pivot = r;
    [a[col], a[pivot]] = [a[pivot], a[col]];
    for (let r = 0; r < k; r++) {
      if (r === col || a[col][col] === 0) continue;
      const f = a[r][col] / a[col][col];
      for (let c = col; c <= k; c++) a[r][c] -= f * a[col][c];
    }
  }
  return a.map((row, i) => (row[i] === 0 ? 0 : row[k] / row[i]));
}

/** Plain least squares (no ridge). */
export function leastSquares(rows: readonly number[][], y: readonly number[]): number[] {
  const k = rows[0]?.length ?? 0;
  return ridgeLeastSquares(rows, y, Array(k).fill(0), Array(k).fill(0));
}

/** Predicted prompt size of a request under fitted constants. */
export function predictPrompt(f: RequestFeatures, e: CharRatioEstimatorOptions, promptOverheadTokens: number): number {
  return promptOverheadTokens + e.blockOverheadTokens * f.blocks + f.prose / e.proseCharsPerToken + f.code / e.codeCharsPerToken + e.imageTokens * f.images;
}

function scoreFit(features: readonly RequestFeatures[], y: readonly number[], e: CharRatioEstimatorOptions, c: number): { rmse: number; promptSizeError: number } {
  let sq = 0;
  let abs = 0;
  let total = 0;
  features.forEach((f, i) => {
    const d = predictPrompt(f, e, c) - y[i];
    sq += d * d;
    abs += Math.abs(d);
    total += y[i];
  });
  return { rmse: Math.sqrt(sq / Math.max(1, features.length)), promptSizeError: total > 0 ? abs / total : 0 };
}

export function fitFeatures(features: readonly RequestFeatures[], recorded: readonly number[], options: Partial<FitOptions> = {}): EstimatorFit {
  const o: FitOptions = { ...DEFAULT_FIT_OPTIONS, ...options };
  const prior = o.prior;
  const fallback = (reason: string): EstimatorFit => ({
    fitted: false,
    reason,
    estimator: prior.estimator,
    promptOverheadTokens: prior.promptOverheadTokens,
    samples: features.length,
    ...scoreFit(features, recorded, prior.estimator, prior.promptOverheadTokens),
  });
  if (features.length < o.minSamples) return fallback(`${features.length} billed requests; a fit needs ${o.minSamples}`);
  const y = recorded.map((r, i) => r - prior.estimator.imageTokens * features[i].images);
  const separate = fitColumns(features, y, o, "separate");
  const ratioOk = (x: number) => x > 1 / 12 && x < 1;
  let [c, a, p, q] = separate;
  let note: string | undefined;
  if (!ratioOk(p) || !ratioOk(q)) {
    // Prose and code moved together (or one is too small a share to pin down): one ratio for both.
    const split = `prose ${(1 / p).toFixed(2)}, code ${(1 / q).toFixed(2)}`;
    [c, a, p, q] = fitColumns(features, y, o, "shared");
    if (!ratioOk(p)) return fallback(`fitted chars per token out of range (${split}; ${(1 / p).toFixed(2)} for both)`);
    note = `one chars-per-token ratio for prose and code: the separate fit was out of range (${split})`;
  }
  if (!(a >= 0 && a <= 200)) return fallback(`fitted block overhead out of range (${a.toFixed(1)} tokens)`);
  const estimator: CharRatioEstimatorOptions = { ...prior.estimator, proseCharsPerToken: 1 / p, codeCharsPerToken: 1 / q, blockOverheadTokens: a };
  const overhead = Math.max(0, c);
  return { fitted: true, ...(note ? { reason: note } : {}), estimator, promptOverheadTokens: overhead, samples: features.length, ...scoreFit(features, recorded, estimator, overhead) };
}

/**
 * [C, a, p, q] fitted with prose and code apart ("separate") or as one payload ("shared",
 * p = q); a negative per-block overhead is not a cost, so it is refitted with none.
 */
function fitColumns(features: readonly RequestFeatures[], y: readonly number[], o: FitOptions, ratios: "separate" | "shared"): [number, number, number, number] {
  const columns = ratios === "separate" ? [0, 1, 2, 3] : [0, 1, 4];
  let out = solve(features, y, o, columns);
  if (out[1] < 0) out = solve(features, y, o, columns.filter((j) => j !== 1));
  return out;
}

/**
 * Ridge fit of the chosen columns of [1, blocks, prose, code, prose + code]; the others are 0.
 * Column 4 (one ratio for both payloads) is returned as both p and q.
 */
function solve(features: readonly RequestFeatures[], y: readonly number[], o: FitOptions, columns: readonly number[]): [number, number, number, number] {
  const e = o.prior.estimator;
  const all = (f: RequestFeatures) => [1, f.blocks, f.prose, f.code, f.prose + f.code];
  const rows = features.map((f) => columns.map((j) => all(f)[j]));
  const shared = 2 / (e.proseCharsPerToken + e.codeCharsPerToken);
  const beta0All = [o.prior.promptOverheadTokens, e.blockOverheadTokens, 1 / e.proseCharsPerToken, 1 / e.codeCharsPerToken, shared];
  // A feature the session never shows (no code at all) keeps its prior value.
  const lambda = columns.map((_, k) => {
    if (columns[k] === 0) return 0;
    const ss = rows.reduce((s, r) => s + r[k] * r[k], 0);
    return ss > 0 ? o.ridge * ss : 1;
  });
  const beta = ridgeLeastSquares(rows, y, lambda, columns.map((j) => beta0All[j]));
  const out: [number, number, number, number] = [0, 0, 0, 0];
  columns.forEach((j, k) => {
    if (j === 4) out[2] = out[3] = beta[k];
    else out[j] = beta[k];
  });
  return out;
}

export function fitEstimatorToUsage(samples: readonly FitSample[], options: Partial<FitOptions> = {}): EstimatorFit {
  const closed = options.closedCycleThinking ?? DEFAULT_FIT_OPTIONS.closedCycleThinking;
  const layers = options.layers ?? DEFAULT_FIT_OPTIONS.layers;
  return fitFeatures(
    samples.map((s) => requestFeatures(s.body, closed, layers, options.bytes)),
    samples.map((s) => s.recordedPrompt),
    options,
  );
}

/**
 * Two-fold split for cross-validation, in time order: fit on the first half of the requests,
 * score on the second (a session's later requests are what a fit from its start would meet).
 */
export function splitHalves<T>(items: readonly T[]): { fit: T[]; score: T[]; scoreFrom: number } {
  const half = Math.floor(items.length / 2);
  return { fit: items.slice(0, half), score: items.slice(half), scoreFrom: half };
}
