/**
 * `keepLastTurns`: how many assistant messages keep their thinking. Shared by the strip
 * (live-count fallback) and the flush-time boundary computation so both clamp the same way.
 */

/** The values the settings UI cycles through. */
export const KEEP_LAST_TURNS_PRESETS = [1, 4, 8, 16, 32, 64] as const;

export type KeepLastTurnsPreset = (typeof KEEP_LAST_TURNS_PRESETS)[number];

/**
 * 1: every flush strips the thinking of the request that just ended, so the strip rewrites the
 * same stretch of history the flush's stubs rewrite anyway (one rewrite per prompt). A larger
 * value moves the strip's first change further back than the stubs' and the rewrite with it;
 * on the wire benchmark (bench/wire, keeps-all model) 16 cost 0.513×/0.502× bare, 1 cost
 * 0.453×/0.436× (seeds 101/102).
 */
export const DEFAULT_KEEP_LAST_TURNS: KeepLastTurnsPreset = 1;

/**
 * At least one assistant message always keeps its thinking: 0, negatives and NaN become 1,
 * fractions round down. `Infinity` stays `Infinity` (nothing is ever old enough to strip).
 */
export function clampKeepLastTurns(keepLastTurns: number): number {
  if (Number.isNaN(keepLastTurns)) return 1;
  return Math.max(1, Math.floor(keepLastTurns));
}
