/**
 * What to do when Pi is about to compact (`session_before_compact`) while a background job is
 * still pending. Pure over plain facts; the wiring performs the answer.
 *
 * - `cancel`: Pi's threshold compaction is cancelled; the context still has room for the
 *   largest recent turn (twice over) with the next request's output budget intact
 *   (`hasRoom`), so the job is applied at a later turn end.
 * - `wait`: no room (or an overflow, or the user's own `/compact`): wait, bounded, for the job
 *   and hand it over when it validates; Pi compacts on its own if it does not come in time.
 *   At Pi's threshold or on overflow the wait is cut short at `digestAfterMs` (the stall
 *   budget): the job is then late, and an extractive digest is applied in its place
 *   (`late-digest.ts`). The user's own `/compact` waits for the model's summary.
 * - `fallback`: the job cannot serve this compaction (`/compact <instructions>`, waiting
 *   disabled): it is staled `sync_fallback` and Pi compacts on its own at once.
 *
 * An overflow-triggered compaction is never cancelled.
 */

export type CompactTrigger = "manual" | "threshold" | "overflow";

/** The margin is this many times the largest recent per-turn growth. */
export const ROOM_GROWTH_FACTOR = 2;
/** pi-ai's output clamp: a safety of max(4,096, 15% of the input), relaxed to 4,096 below 32,768 of room. */
export const CLAMP_SAFETY_TOKENS = 4_096;
export const CLAMP_SAFETY_RATIO = 0.15;
export const CLAMP_MIN_OUTPUT_WITH_RATIO = 32_768;
/** Output a request must keep when its thinking budget does not follow `max_tokens`. */
export const MIN_OUTPUT_TOKENS = 8_192;

export interface RoomInput {
  /** Current context tokens; null/undefined when unknown. */
  tokens: number | null | undefined;
  contextWindow: number;
  /** Largest recent per-turn growth of the context, in tokens (0 when none observed). */
  maxTurnGrowth: number;
  /** The model's `maxTokens` (output ceiling). */
  maxOutputTokens: number;
  /**
   * The thinking budget is derived from `max_tokens` (Anthropic budget thinking): a clamped
   * `max_tokens` changes the budget, and with it the provider's message cache key.
   */
  budgetFollowsOutput: boolean;
}

/** Anthropic budget thinking derives `budget_tokens` from `max_tokens` (adaptive thinking does not). */
export function budgetFollowsOutput(model: { api?: string; reasoning?: boolean; compat?: unknown } | undefined, thinkingLevel: string): boolean {
  if (!model || model.api !== "anthropic-messages" || !model.reasoning || thinkingLevel === "off") return false;
  return (model.compat as { forceAdaptiveThinking?: boolean } | undefined)?.forceAdaptiveThinking !== true;
}

/** Tokens that must stay free below the window for another turn of the largest recent size. */
export function roomMargin(maxTurnGrowth: number): number {
  const growth = Number.isFinite(maxTurnGrowth) && maxTurnGrowth > 0 ? maxTurnGrowth : 0;
  return Math.ceil(ROOM_GROWTH_FACTOR * growth);
}

/** pi-ai's `clampMaxTokensToContext` without the model ceiling: output room left by `input` tokens. */
export function outputRoom(input: number, contextWindow: number): number {
  let room = contextWindow - input - Math.max(CLAMP_SAFETY_TOKENS, Math.ceil(input * CLAMP_SAFETY_RATIO));
  if (room < CLAMP_MIN_OUTPUT_WITH_RATIO) room = Math.min(CLAMP_MIN_OUTPUT_WITH_RATIO, contextWindow - input - CLAMP_SAFETY_TOKENS);
  return room;
}

/**
 * The context can take another turn of the largest recent size and the request after it still
 * gets its output: its full `max_tokens` when the thinking budget follows it (a clamp would
 * change the budget and bust the provider's cache on every request), else at least
 * `min(maxTokens, MIN_OUTPUT_TOKENS)`.
 */
export function hasRoom(input: RoomInput): boolean {
  if (input.tokens === null || input.tokens === undefined || !Number.isFinite(input.tokens) || input.contextWindow <= 0) return false;
  const next = input.tokens + roomMargin(input.maxTurnGrowth);
  const needed = input.budgetFollowsOutput ? input.maxOutputTokens : Math.min(input.maxOutputTokens, MIN_OUTPUT_TOKENS);
  return next <= input.contextWindow && outputRoom(next, input.contextWindow) >= needed;
}

export interface PendingAtCompactFacts extends RoomInput {
  reason: CompactTrigger;
  /** `/compact <instructions>`: a background summary cannot answer it. */
  customInstructions: boolean;
  /** Longest wait allowed for the job (ms); 0 disables waiting. */
  maxWaitMs: number;
  /** Stall budget before a digest replaces a late job (ms); negative: never. */
  stallMs: number;
}

export type PendingAtCompactDecision =
  | { action: "cancel" }
  | { action: "wait"; maxWaitMs: number; digestAfterMs?: number }
  | { action: "fallback"; why: "custom_instructions" | "no_wait" };

/** Whether a wait at Pi's compaction ends in a digest past the stall budget (not for `/compact`: the user asked for a summary). */
export function digestsWhenLate(f: Pick<PendingAtCompactFacts, "reason" | "stallMs" | "maxWaitMs">): boolean {
  return f.reason !== "manual" && f.stallMs >= 0 && f.stallMs < f.maxWaitMs;
}

export function decidePendingAtCompact(f: PendingAtCompactFacts): PendingAtCompactDecision {
  if (f.customInstructions) return { action: "fallback", why: "custom_instructions" };
  if (f.reason === "threshold" && hasRoom(f)) return { action: "cancel" };
  if (f.maxWaitMs <= 0) return { action: "fallback", why: "no_wait" };
  const digest = digestsWhenLate(f);
  return digest ? { action: "wait", maxWaitMs: f.stallMs, digestAfterMs: f.stallMs } : { action: "wait", maxWaitMs: f.maxWaitMs };
}

/**
 * Abort-and-compact: a job became ready mid-stream. Only when the turn can be aborted, nothing
 * is queued, usage is over Pi's hard threshold (window − reserve), and the context has no room
 * for another turn: with room, the job waits for the turn end (nothing is thrown away).
 * At most once per job.
 */
export function shouldAbortAndCompact(input: RoomInput & {
  isIdle: boolean;
  hasPendingMessages: boolean;
  hasAbortSignal: boolean;
  reserveTokens: number;
  alreadyTriedForJob: boolean;
}): boolean {
  if (input.isIdle || input.hasPendingMessages || !input.hasAbortSignal || input.alreadyTriedForJob) return false;
  if (input.tokens === null || input.tokens === undefined || input.contextWindow <= 0) return false;
  if (input.tokens <= input.contextWindow - input.reserveTokens) return false;
  return !hasRoom(input);
}
