/**
 * The in-loop budget trigger: when a long tool loop may flush before its final answer.
 *
 * A flush inside a loop rewrites the cached history the loop's next request reads back, so it
 * pays only when the context is big enough that the rewrite is small next to what every later
 * request saves — and it is needed only when the window is running out. The trigger is tied to
 * that headroom, not to growth since the last flush:
 *
 *   threshold = min(fraction × window, maxTokens)
 *   fires when context ≥ threshold  and  context − context at the last flush ≥ threshold / 4
 *
 * `maxTokens` keeps it firing on 1M-token windows. The growth guard stops a flush that could not
 * bring the context below the threshold (the current loop's own outputs) from firing again at
 * every step. Pure: the engine's budget rule (`budgetTriggerFires` in `src/engine/triggers.ts`)
 * wraps it on the user's settings, and both the live host (`src/host/keeper-host.ts`, Pi's
 * usage) and the replay (`src/report/keeper-engine.ts`, characters / 4) call that.
 */
import type { BudgetTriggerConfig } from "../prune/config.ts";

export interface BudgetTriggerCheck {
  trigger: BudgetTriggerConfig;
  /** Current context tokens. */
  contextTokens: number;
  /** Context tokens right after the last flush (0 before the first). */
  tokensAtLastFlush: number;
  contextWindow: number;
}

/** Share of the threshold the context must have grown by since the last flush. */
export const REFIRE_GROWTH_SHARE = 0.25;

export function budgetThreshold(trigger: BudgetTriggerConfig, contextWindow: number): number {
  return Math.min(trigger.fraction * contextWindow, trigger.maxTokens);
}

export function budgetTriggerFiresFor(input: BudgetTriggerCheck): boolean {
  if (!input.trigger.enabled) return false;
  if (!(input.contextWindow > 0) || !(input.contextTokens >= 0)) return false;
  const threshold = budgetThreshold(input.trigger, input.contextWindow);
  return input.contextTokens >= threshold && input.contextTokens - input.tokensAtLastFlush >= REFIRE_GROWTH_SHARE * threshold;
}
