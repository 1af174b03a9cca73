/**
 * The per-session estimator fit of the replay: fit the char-ratio estimator to the prompt
 * sizes this recording's usage reports (estimator-fit.ts), per model family (Claude and GPT
 * tokenize differently; a family with fewer than 2 × `minSamples` requests uses the fit over
 * the whole session), once on every billed request of the family (what the replay uses) and
 * once on its first half only, so the family's second half can score a fit it has not seen
 * (`crossValidatedCalibration`). A recording whose requests carry no system prompt gets empty
 * placeholders: the fitted constant stands for the unknown tools + system.
 */
import { analyzeRun, createAnalyzerMemo, type AnalyzerOptions } from "../cache/analyzer.ts";
import { DEFAULT_FIT_OPTIONS, fitEstimatorToUsage, splitHalves, type EstimatorFit, type FitOptions } from "../cache/estimator-fit.ts";
import { createCharRatioEstimator, type TokenEstimator } from "../cache/token-estimator.ts";
import type { TimedRequest, WireRequestBody } from "../cache/wire-types.ts";
import { calibrate, type Calibration, type RecordedUsage } from "./calibration.ts";

/** With a per-session fit the unknown prompt is an empty placeholder; the fitted constant carries its size. */
export const PER_SESSION_UNKNOWN_PROMPT = { toolsTokens: 0, systemTokens: 0 };

export interface FamilyFit {
  /** The cache rule family (anthropic, openai, google, bedrock, other). */
  family: string;
  requests: number;
  /** Fitted on every billed request of the family (or the whole session when the family is small). */
  all: EstimatorFit;
  /** Fitted on the family's first half only. */
  firstHalf: EstimatorFit;
  /** How many of the family's requests (in time order) the first half holds. */
  firstHalfRequests: number;
  /** The family was too small for its own fit: the session-wide one is used. */
  pooled: boolean;
}

export interface SessionFit {
  /** Most requests first. */
  families: FamilyFit[];
  /** The main family's fit (the first of `families`). */
  all: EstimatorFit;
}

export interface FitRequest {
  body: WireRequestBody;
  recorded: RecordedUsage;
  family: string;
}

const promptOf = (r: RecordedUsage) => r.input + r.cacheRead + r.cacheWrite;

export function fitSessionEstimator(requests: readonly FitRequest[], options: Partial<FitOptions> = {}): SessionFit {
  const min = options.minSamples ?? DEFAULT_FIT_OPTIONS.minSamples;
  const sample = (r: FitRequest) => ({ body: r.body, recordedPrompt: promptOf(r.recorded) });
  const everything = requests.map(sample);
  const pooledHalves = splitHalves(everything);
  const pooledAll = fitEstimatorToUsage(everything, options);
  const pooledFirst = fitEstimatorToUsage(pooledHalves.fit, options);
  const names = [...new Set(requests.map((r) => r.family))];
  const families = names.map((family): FamilyFit => {
    const mine = requests.filter((r) => r.family === family).map(sample);
    if (names.length === 1 || mine.length < 2 * min) {
      // One family: the session fit is the family fit. A small family: the session's.
      const firstHalfRequests = names.length === 1 ? pooledHalves.scoreFrom : Math.floor(mine.length / 2);
      return { family, requests: mine.length, all: pooledAll, firstHalf: pooledFirst, firstHalfRequests, pooled: names.length > 1 };
    }
    const halves = splitHalves(mine);
    return { family, requests: mine.length, all: fitEstimatorToUsage(mine, options), firstHalf: fitEstimatorToUsage(halves.fit, options), firstHalfRequests: halves.scoreFrom, pooled: false };
  });
  families.sort((a, b) => b.requests - a.requests);
  return { families, all: families[0]?.all ?? pooledAll };
}

/** Per-request estimators of a fit (`which`: the full fit or the first half's). */
export function estimatorsOf(fit: SessionFit, families: readonly string[], which: "all" | "firstHalf"): Array<{ estimator: TokenEstimator; promptOverheadTokens: number }> {
  const made = new Map<string, { estimator: TokenEstimator; promptOverheadTokens: number }>();
  for (const f of fit.families) made.set(f.family, { estimator: createCharRatioEstimator(f[which].estimator), promptOverheadTokens: f[which].promptOverheadTokens });
  const fallback = made.get(fit.families[0]?.family ?? "") ?? { estimator: createCharRatioEstimator(fit.all.estimator), promptOverheadTokens: fit.all.promptOverheadTokens };
  return families.map((f) => made.get(f) ?? fallback);
}

/**
 * Replays the run with each family's first-half fit and scores every request after its
 * family's first half: an out-of-sample figure for the per-session calibration. Undefined when
 * nothing is left to score.
 */
export function crossValidatedCalibration(a: {
  fit: SessionFit;
  timed: readonly TimedRequest[];
  families: readonly string[];
  recorded: readonly RecordedUsage[];
  analyzer: Partial<AnalyzerOptions>;
}): Calibration | undefined {
  const seen = new Map<string, number>();
  const scored = a.families.map((f) => {
    const n = seen.get(f) ?? 0;
    seen.set(f, n + 1);
    const firstHalf = a.fit.families.find((x) => x.family === f)?.firstHalfRequests ?? 0;
    return n >= firstHalf && firstHalf > 0;
  });
  if (!scored.some(Boolean)) return undefined;
  const est = estimatorsOf(a.fit, a.families, "firstHalf");
  const timed = a.timed.map((t, i) => ({ ...t, ...est[i] }));
  const analysis = analyzeRun(timed, { ...a.analyzer, memo: createAnalyzerMemo(a.analyzer.memo?.bytes ? { bytes: a.analyzer.memo.bytes } : {}) });
  return calibrate(
    analysis.filter((_, i) => scored[i]),
    a.recorded.filter((_, i) => scored[i]),
  );
}
