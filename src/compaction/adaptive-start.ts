/**
 * Adaptive start: from how fast the context grows (tokens per turn, per millisecond) and how
 * long summaries take, start a background job early enough that it is ready before Pi's
 * threshold. Pure: the wiring records observations into these plain values.
 */

/** One `turn_end` observation. */
export interface TurnSample {
  at: number;
  tokens: number;
}

export interface Pace {
  /** Recent turn samples, oldest first (reset when the context shrinks, e.g. a compaction). */
  turns: readonly TurnSample[];
  /** Recent summary latencies (job start → ready), oldest first, in ms. */
  latenciesMs: readonly number[];
}

export const EMPTY_PACE: Pace = { turns: [], latenciesMs: [] };
export const PACE_TURNS = 8;
export const PACE_LATENCIES = 3;
/** Assumed summary latency before any job has finished (ms). */
export const DEFAULT_EXPECTED_LATENCY_MS = 5_000;
/** Safety factor on the lead (latency × growth rate). */
export const LEAD_SAFETY = 1.25;

export function recordTurn(pace: Pace, sample: TurnSample): Pace {
  if (!Number.isFinite(sample.tokens) || sample.tokens < 0) return pace;
  const last = pace.turns[pace.turns.length - 1];
  // A shrinking context (a compaction) starts a new series: its growth says nothing about the old one.
  const turns = last && sample.tokens < last.tokens ? [sample] : [...pace.turns, sample].slice(-PACE_TURNS);
  return { ...pace, turns };
}

export function recordLatency(pace: Pace, latencyMs: number): Pace {
  if (!Number.isFinite(latencyMs) || latencyMs < 0) return pace;
  return { ...pace, latenciesMs: [...pace.latenciesMs, latencyMs].slice(-PACE_LATENCIES) };
}

/** Largest growth between two consecutive recent turns (tokens); 0 with fewer than two samples. */
export function maxTurnGrowth(pace: Pace): number {
  let max = 0;
  for (let i = 1; i < pace.turns.length; i++) max = Math.max(max, pace.turns[i].tokens - pace.turns[i - 1].tokens);
  return max;
}

/** Average growth per turn over the recent series (tokens); 0 with fewer than two samples. */
export function growthPerTurn(pace: Pace): number {
  const n = pace.turns.length;
  if (n < 2) return 0;
  return Math.max(0, (pace.turns[n - 1].tokens - pace.turns[0].tokens) / (n - 1));
}

/** Average growth rate over the recent series (tokens per ms); 0 when unknown. */
export function growthPerMs(pace: Pace): number {
  const first = pace.turns[0];
  const last = pace.turns[pace.turns.length - 1];
  if (!first || !last || last.at <= first.at) return 0;
  return Math.max(0, (last.tokens - first.tokens) / (last.at - first.at));
}

/** The slowest recent summary, or the default before any finished. */
export function expectedLatencyMs(pace: Pace): number {
  return pace.latenciesMs.length > 0 ? Math.max(...pace.latenciesMs) : DEFAULT_EXPECTED_LATENCY_MS;
}

/** Tokens the context grows while a summary is made (growth rate × slowest recent latency × safety). */
export function leadTokens(pace: Pace): number {
  return growthPerMs(pace) * expectedLatencyMs(pace) * LEAD_SAFETY;
}

export interface AdaptiveStartInput {
  pace: Pace;
  contextWindow: number;
  reserveTokens: number;
  keepRecentTokens: number;
  /** The configured start (`floor(window × START_RATIO)`). */
  configuredStart: number;
}

/**
 * Tokens above which a job starts: the configured start, moved earlier by the expected lead
 * (growth rate × expected latency × safety) before Pi's threshold, but never below the floor
 * `keep + reserve`. A job started at S summarizes up to S − keep; when it is applied later its
 * cut is caught up to Pi's cut then (`catch-up.ts`), so the context after the apply is about
 * keep + summary, whenever the job started. Starting at or below keep + reserve would summarize
 * less than a reserve's worth of new history, and the context after the apply (keep, the
 * summary and its digest) could already be over the start: the compactions would cascade, each
 * a full cache rewrite covering little.
 */
export function adaptiveStartTokens(input: AdaptiveStartInput): number {
  const threshold = input.contextWindow - input.reserveTokens;
  // An empty configured window (START_RATIO 1, or a reserve larger than the gap) stays empty.
  if (input.configuredStart >= threshold) return input.configuredStart;
  const lead = leadTokens(input.pace);
  const floor = startFloor(input);
  const early = Math.max(floor, Math.floor(threshold - lead));
  return Math.min(input.configuredStart, early);
}

/**
 * The smallest share of Pi's threshold a job may start at, whatever the lead. A job that is
 * ready is applied, so its start is where the session gets compacted: with near-instant answers
 * the measured growth per ms makes the lead longer than a large window, and without this bound a
 * 1M-token session would be compacted at keep + reserve (~36k tokens), long before Pi would ever
 * compact it. 0.35 leaves the 110k-window floor at keep + reserve (36,384 > 0.35 × 93,616).
 */
export const MIN_START_SHARE_OF_THRESHOLD = 0.35;

/** The earliest adaptive start: keep + reserve, and never below `MIN_START_SHARE_OF_THRESHOLD` of Pi's threshold (see `adaptiveStartTokens`). */
export function startFloor(input: Pick<AdaptiveStartInput, "keepRecentTokens" | "reserveTokens" | "contextWindow">): number {
  const threshold = input.contextWindow - input.reserveTokens;
  return Math.max(input.keepRecentTokens + input.reserveTokens, Math.ceil(threshold * MIN_START_SHARE_OF_THRESHOLD));
}
