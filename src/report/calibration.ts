/**
 * Calibration of the simulated cache figures against the usage the provider recorded, and the
 * detection of external invalidations (restart, system prompt change) in a recording.
 */
export interface RecordedUsage {
  /** Uncached input tokens (`usage.input`). */
  input: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface SimulatedUsage {
  uncached: number;
  read: number;
  write: number;
}

export interface SeriesError {
  recorded: number;
  simulated: number;
  /** Σ |sim − rec| over requests. */
  absError: number;
}

export interface Calibration {
  requests: number;
  /** Σ over requests of |Δread| + |Δwrite| + |Δuncached|, over Σ recorded (read+write+uncached). */
  total_error: number;
  /** Same figure for the per-request prompt size (read+write+uncached) alone. */
  prompt_size_error: number;
  read: SeriesError;
  write: SeriesError;
  uncached: SeriesError;
}

export function calibrate(simulated: readonly SimulatedUsage[], recorded: readonly RecordedUsage[]): Calibration {
  if (simulated.length !== recorded.length) throw new Error(`calibrate: ${simulated.length} simulated vs ${recorded.length} recorded requests`);
  const series = (sim: (s: SimulatedUsage) => number, rec: (r: RecordedUsage) => number): SeriesError => {
    let r = 0;
    let s = 0;
    let e = 0;
    simulated.forEach((x, i) => {
      r += rec(recorded[i]);
      s += sim(x);
      e += Math.abs(sim(x) - rec(recorded[i]));
    });
    return { recorded: r, simulated: s, absError: e };
  };
  const read = series((s) => s.read, (r) => r.cacheRead);
  const write = series((s) => s.write, (r) => r.cacheWrite);
  const uncached = series((s) => s.uncached, (r) => r.input);
  const size = series((s) => s.read + s.write + s.uncached, (r) => r.cacheRead + r.cacheWrite + r.input);
  const denom = read.recorded + write.recorded + uncached.recorded;
  return {
    requests: simulated.length,
    total_error: denom > 0 ? (read.absError + write.absError + uncached.absError) / denom : 0,
    prompt_size_error: size.recorded > 0 ? size.absError / size.recorded : 0,
    read,
    write,
    uncached,
  };
}

export interface ExternalInvalidationOptions {
  /** A read below this fraction of the previous request's prompt counts as a drop. Default 0.5. */
  minReadFraction: number;
  /** Drops after a gap longer than this are explained by TTL expiry, not flagged. Default 5 min. */
  ttlMs: number;
}

export const DEFAULT_EXTERNAL_INVALIDATION: ExternalInvalidationOptions = { minReadFraction: 0.5, ttlMs: 5 * 60 * 1000 };

type TimedUsage = { timestamp: number; recorded: RecordedUsage; ttlMs?: number; cacheKey?: string };

/**
 * Requests that, within the TTL and on the same model (cache key) as the request before them,
 * read less than `minReadFraction` of what they could have read (`expected`). A switch to
 * another model reads another cache: a low read there is expected. A request's own cache
 * lifetime (its provider's rule) is used when given, else the option's.
 */
function lowReads(requests: readonly TimedUsage[], options: Partial<ExternalInvalidationOptions>, expected: (i: number) => number): number[] {
  const o = { ...DEFAULT_EXTERNAL_INVALIDATION, ...options };
  const out: number[] = [];
  for (let i = 1; i < requests.length; i++) {
    const prev = requests[i - 1];
    const cur = requests[i];
    if (prev.cacheKey !== cur.cacheKey || cur.timestamp - prev.timestamp > (cur.ttlMs ?? o.ttlMs)) continue;
    if (cur.recorded.cacheRead < o.minReadFraction * expected(i)) out.push(i);
  }
  return out;
}

/**
 * Indices of requests whose recorded cache read falls far below the previous request's
 * prompt (same model) although the gap is within the TTL: the cache was invalidated by something the
 * transcript does not show (restart, system prompt or tool change, thinking setting).
 */
export function findExternalInvalidations(requests: readonly TimedUsage[], options: Partial<ExternalInvalidationOptions> = {}): number[] {
  return lowReads(requests, options, (i) => {
    const prev = requests[i - 1]!.recorded;
    return prev.input + prev.cacheRead + prev.cacheWrite;
  });
}

/**
 * External invalidations of a recording made with this extension: its recorded usage is the
 * keeper's own, whose history rewrites lose cache by design, so a low read alone proves
 * nothing. A request is flagged when the provider read less than `minReadFraction` of what the
 * replay of the keeper's requests (TTL expiry the only invalidation) says it could read: the
 * cache was lost to something the replay does not see.
 */
export function findExternalInvalidationsAgainstReplay(
  requests: readonly TimedUsage[],
  replayed: ReadonlyArray<{ read: number }>,
  options: Partial<ExternalInvalidationOptions> = {},
): number[] {
  return lowReads(requests, options, (i) => replayed[i]?.read ?? 0);
}
