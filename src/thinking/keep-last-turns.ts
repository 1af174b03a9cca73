/**
 * `keepLastTurns`: how many assistant messages keep their thinking. Shared by the strip
 * (live-count fallback) and the flush-time boundary computation so both clamp the same way.
 */

/** The values the settings UI cycles through. */
export const KEEP_LAST_TURNS_PRESETS = [4, 8, 16, 32, 64] as const;

export type KeepLastTurnsPreset = (typeof KEEP_LAST_TURNS_PRESETS)[number];

export const DEFAULT_KEEP_LAST_TURNS: KeepLastTurnsPreset = 16;

/**
 * At least one assistant message always keeps its thinking: 0, negatives and NaN become 1,
 * fractions round down. `Infinity` stays `Infinity` (nothing is ever old enough to strip).
 */
export function clampKeepLastTurns(keepLastTurns: number): number {
  if (Number.isNaN(keepLastTurns)) return 1;
  return Math.max(1, Math.floor(keepLastTurns));
}
