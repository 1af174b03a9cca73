/**
 * The per-session estimator fit of the replay: fit the char-ratio estimator to the prompt
 * sizes this recording's usage reports (estimator-fit.ts), once on every billed request (what
 * the replay then uses) and once on the first half only, so the second half can score a fit it
 * has not seen (`crossValidatedCalibration`). A recording whose requests carry no system
 * prompt gets empty placeholders: the fitted constant stands for the unknown tools + system.
 */
import { analyzeRun, createAnalyzerMemo, type AnalyzerOptions } from "../cache/analyzer.ts";
import { fitEstimatorToUsage, splitHalves, type EstimatorFit, type FitOptions } from "../cache/estimator-fit.ts";
import { createCharRatioEstimator } from "../cache/token-estimator.ts";
import type { TimedRequest, WireRequestBody } from "../cache/wire-types.ts";
import { calibrate, type Calibration, type RecordedUsage } from "./calibration.ts";

/** With a per-session fit the unknown prompt is an empty placeholder; the fitted constant carries its size. */
export const PER_SESSION_UNKNOWN_PROMPT = { toolsTokens: 0, systemTokens: 0 };

export interface SessionFit {
  /** Fitted on every billed request: what the replay uses. */
  all: EstimatorFit;
  /** Fitted on the requests before `scoreFrom` only. */
  firstHalf: EstimatorFit;
  scoreFrom: number;
}

export function fitSessionEstimator(
  requests: ReadonlyArray<{ body: WireRequestBody; recorded: RecordedUsage }>,
  options: Partial<FitOptions> = {},
): SessionFit {
  const samples = requests.map((r) => ({ body: r.body, recordedPrompt: r.recorded.input + r.recorded.cacheRead + r.recorded.cacheWrite }));
  const { fit, scoreFrom } = splitHalves(samples);
  return { all: fitEstimatorToUsage(samples, options), firstHalf: fitEstimatorToUsage(fit, options), scoreFrom };
}

/**
 * Replays the run with the first-half fit and scores the requests from `scoreFrom` on: an
 * out-of-sample figure for the per-session calibration. Undefined when there is no second half.
 */
export function crossValidatedCalibration(a: {
  fit: SessionFit;
  timed: readonly TimedRequest[];
  recorded: readonly RecordedUsage[];
  analyzer: Partial<AnalyzerOptions>;
  analyze?: typeof analyzeRun;
}): Calibration | undefined {
  const from = a.fit.scoreFrom;
  if (from >= a.timed.length || from === 0) return undefined;
  const analysis = (a.analyze ?? analyzeRun)(a.timed, {
    ...a.analyzer,
    estimator: createCharRatioEstimator(a.fit.firstHalf.estimator),
    promptOverheadTokens: a.fit.firstHalf.promptOverheadTokens,
    memo: createAnalyzerMemo(),
  });
  return calibrate(analysis.slice(from), a.recorded.slice(from));
}
