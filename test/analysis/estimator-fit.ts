/**
 * Least-squares fit of the char-ratio token estimator against recorded prompt sizes:
 *   recordedPrompt_i ≈ C + a·blocks_i + p·proseChars_i + c·codeChars_i
 * where C is the unknown tools+system size, a the per-block overhead, and 1/p, 1/c the
 * prose and code-ish chars-per-token ratios. Placeholder blocks (tools, system) are left out
 * of the features: they are what C stands for.
 */
import { flattenRequest } from "../../src/cache/flatten.ts";
import { blockPayload } from "../../src/cache/token-estimator.ts";
import type { WireRequestBody } from "../../src/cache/wire-types.ts";

export interface EstimatorFit {
  constantTokens: number;
  blockOverheadTokens: number;
  proseCharsPerToken: number;
  codeCharsPerToken: number;
  /** Root mean square residual, tokens. */
  rmse: number;
}

export interface FitSample {
  body: WireRequestBody;
  recordedPrompt: number;
}

export function messageFeatures(body: WireRequestBody): [number, number, number] {
  let blocks = 0;
  let prose = 0;
  let code = 0;
  for (const b of flattenRequest(body)) {
    if (b.layer !== "messages") continue;
    blocks++;
    for (const p of blockPayload(b)) {
      if (p.cls === "prose") prose += p.chars;
      else if (p.cls === "code") code += p.chars;
    }
  }
  return [blocks, prose, code];
}

/** Solve the normal equations (XᵀX)β = Xᵀy by Gaussian elimination with partial pivoting. */
export function leastSquares(rows: readonly number[][], y: readonly number[]): number[] {
  const k = rows[0].length;
  const a = Array.from({ length: k }, (_, i) => Array.from({ length: k + 1 }, (_, j) => (j < k ? rows.reduce((s, r) => s + r[i] * r[j], 0) : rows.reduce((s, r, n) => s + r[i] * y[n], 0))));
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

export function fitEstimator(samples: readonly FitSample[]): EstimatorFit {
  const rows = samples.map((s) => [1, ...messageFeatures(s.body)]);
  const y = samples.map((s) => s.recordedPrompt);
  const [c0, a, p, c] = leastSquares(rows, y);
  const rmse = Math.sqrt(rows.reduce((s, r, i) => s + (r[0] * c0 + r[1] * a + r[2] * p + r[3] * c - y[i]) ** 2, 0) / Math.max(1, rows.length));
  return { constantTokens: c0, blockOverheadTokens: a, proseCharsPerToken: 1 / p, codeCharsPerToken: 1 / c, rmse };
}
