/**
 * When a ready background summary is applied: when the context needs it, not the moment it is
 * ready. Every apply rewrites the whole prompt cache (the context after it starts with the
 * summary), and a summary applied far below Pi's threshold compacts history Pi would have kept:
 * the session pays the rewrite, loses detail early, and compacts more often than bare Pi.
 *
 * A ready summary is due
 * - near Pi's threshold (`contextWindow − reserveTokens`): the context is within the largest
 *   recent per-turn growth of it (`NEED_GROWTH_FACTOR` of it), so the next turn may cross it:
 *   the summary goes in as a `turn_end` draft at the last boundary before Pi would compact. A
 *   turn larger than that crosses first, and Pi's own threshold compaction, before the next
 *   request, is served by the same ready summary (`session_before_compact`): no wait either way;
 * - or when the cache is cold anyway: the last request is older than the cache's entry lifetime,
 *   so the next request writes the whole context whatever happens — compacting first makes that
 *   write smaller.
 *
 * Waiting has a price: the summary's cut stays where the job started. At apply the cut is
 * caught up to Pi's (`catch-up.ts`, an extractive digest of the gap); a gap larger than both
 * `keepRecentTokens` and what the summary covers is refreshed instead, by a new job started one
 * summary's lead before the apply point (`refreshDue`).
 */
import type { RoomInput } from "./threshold-decision.ts";

/** The margin below Pi's threshold is this many times the largest recent per-turn growth (one turn ahead). */
export const NEED_GROWTH_FACTOR = 1;

/** `tokens`: the context now (Pi's usage; unknown: not near anything); `maxTurnGrowth`: the largest recent per-turn growth. */
export interface ApplyNeedInput extends Pick<RoomInput, "tokens" | "contextWindow" | "maxTurnGrowth"> {
  reserveTokens: number;
  /** The prompt cache is already lost (`cacheIsCold`). */
  cacheCold: boolean;
}

export type ApplyNeed = { due: true; why: "threshold" | "cold_cache" } | { due: false };

/** Context size from which a ready summary applies: Pi's threshold less the largest recent turn (undefined without a window). */
export function applyFromTokens(input: Pick<ApplyNeedInput, "contextWindow" | "reserveTokens" | "maxTurnGrowth">): number | undefined {
  if (!(input.contextWindow > 0)) return undefined;
  const threshold = input.contextWindow - input.reserveTokens;
  const growth = Number.isFinite(input.maxTurnGrowth) && input.maxTurnGrowth > 0 ? input.maxTurnGrowth : 0;
  return Math.max(0, threshold - Math.ceil(NEED_GROWTH_FACTOR * growth));
}

export function applyNeed(input: ApplyNeedInput): ApplyNeed {
  const from = applyFromTokens(input);
  const t = input.tokens;
  if (from !== undefined && t !== null && t !== undefined && Number.isFinite(t) && t >= from) return { due: true, why: "threshold" };
  if (input.cacheCold) return { due: true, why: "cold_cache" };
  return { due: false };
}

export interface CacheClockInput {
  /** When the cached prefix was last used (the last request, or a warming refresh); undefined: unknown. */
  lastUseAt: number | undefined;
  now: number;
  /** The session model's cache entry lifetime; undefined: unknown. */
  ttlMs: number | undefined;
}

/** The cached prefix has expired: no request used it for a whole entry lifetime. Unknown facts: not cold. */
export function cacheIsCold(input: CacheClockInput): boolean {
  const { lastUseAt, now, ttlMs } = input;
  if (lastUseAt === undefined || ttlMs === undefined || !(ttlMs > 0)) return false;
  return now - lastUseAt >= ttlMs;
}

/** A margin past the lifetime before an idle apply, so the entry has surely expired. */
export const COLD_SLACK_MS = 1_000;

/** Milliseconds until the cache is cold (with `COLD_SLACK_MS`); undefined when it cannot be known. */
export function msUntilCold(input: CacheClockInput): number | undefined {
  const { lastUseAt, now, ttlMs } = input;
  if (lastUseAt === undefined || ttlMs === undefined || !(ttlMs > 0)) return undefined;
  return Math.max(0, lastUseAt + ttlMs + COLD_SLACK_MS - now);
}

export interface RefreshInput {
  /** Context tokens now. */
  tokens: number | null | undefined;
  /** Where the waiting summary applies (`applyFromTokens`); undefined: nothing applies on its own. */
  applyFrom: number | undefined;
  /** Tokens the context grows while a summary is made (`leadTokens`, adaptive-start.ts). */
  leadTokens: number;
  /** Tokens between the ready summary's cut and Pi's cut now (what the catch-up digest would stand for). */
  gapTokens: number;
  /** Tokens the ready summary covers (before its cut, since the newest compaction). */
  coveredTokens: number;
  keepRecentTokens: number;
}

/**
 * A waiting summary is refreshed (a new job replaces it) when its cut is too far behind — the
 * catch-up digest would stand for more than Pi keeps raw and more than the summary itself
 * covers, so the compaction would be mostly extractive — and the context is one summary's lead
 * short of where it applies: a job started now is ready just in time. Earlier, the context may
 * never get there (a budget flush shrinks it), and the new summary would wait and fall behind
 * in turn. A smaller gap is caught up at apply: a refresh is one more summary call.
 */
export function refreshDue(input: RefreshInput): boolean {
  const t = input.tokens;
  if (t === null || t === undefined || input.applyFrom === undefined) return false;
  const lead = Number.isFinite(input.leadTokens) && input.leadTokens > 0 ? input.leadTokens : 0;
  return t >= input.applyFrom - lead && input.gapTokens > Math.max(input.keepRecentTokens, input.coveredTokens);
}
