/**
 * When a flush runs: the one copy of each trigger rule, for the live host and the replay.
 *
 * - request end: an assistant message that stops without tool calls closes the user's request;
 * - budget: inside a tool loop, once the context fills min(fraction × window, maxTokens) tokens
 *   and grew by a quarter of that since the last flush (`src/flush/budget-trigger.ts`); held
 *   where a compaction applies (just below Pi's threshold), re-based after one (`budgetStep`);
 * - cold cache: the cached prefix is already lost (TTL, model, thinking, tools, compaction),
 *   so every rewrite is free: re-plan before the request renders (see `coldReplanDue`).
 */
import { budgetFlushHold, type CompactionOutlook } from "../compaction/cooperation.ts";
import { budgetTriggerFiresFor } from "../flush/budget-trigger.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";

/** An assistant message that ends the user's request (no tool call, stop reason "stop"). */
export function closesRequest(message: ContextMessage): boolean {
  const m = message as { role?: string; stopReason?: string; content?: Array<{ type: string }> };
  if (m.role !== "assistant" || m.stopReason !== "stop") return false;
  return !(m.content ?? []).some((b) => b.type === "toolCall");
}

export interface BudgetTriggerInput {
  settings: KeeperSettings;
  /** Context tokens now (live: Pi's usage; replay: characters / 4 of the raw branch). */
  contextTokens: number;
  /** Context tokens right after the last flush (0 before the first). */
  tokensAtLastFlush: number;
  contextWindow: number;
}

/**
 * The budget rule on the user's settings: the master switch and pruning gate it, the headroom
 * rule itself is `budgetTriggerFiresFor` (`src/flush/budget-trigger.ts`).
 */
export function budgetTriggerFires(input: BudgetTriggerInput): boolean {
  const s = input.settings;
  if (!s.enabled || !s.pruning.enabled) return false;
  return budgetTriggerFiresFor({ trigger: s.pruning.budgetTrigger, contextTokens: input.contextTokens, tokensAtLastFlush: input.tokensAtLastFlush, contextWindow: input.contextWindow });
}

/** Where the budget trigger counts from. */
export interface BudgetBase {
  /** Context tokens right after the last flush (or the last async compaction handoff). */
  tokensAtLastFlush: number;
  /** Async compaction handoffs already accounted for in `tokensAtLastFlush`. */
  handoffsSeen: number;
}

export interface BudgetStepInput {
  settings: KeeperSettings;
  contextTokens: number;
  contextWindow: number;
  base: BudgetBase;
  /** Async compaction's outlook; undefined when it is off or not registered. */
  compaction: CompactionOutlook | undefined;
}

/**
 * The budget trigger at a turn end, cooperating with async compaction (one cache rewrite per
 * window, `src/compaction/cooperation.ts`): no budget flush where a compaction applies (from
 * the outlook's `applyFrom`, just below Pi's threshold: its apply replaces the prefix the flush
 * would rewrite); after a handoff the budget counts from the compacted context, and that turn
 * does not fire.
 */
export function budgetStep(input: BudgetStepInput): { fire: boolean; base: BudgetBase } {
  const hold = budgetFlushHold({ outlook: input.compaction, handoffsSeen: input.base.handoffsSeen, contextTokens: input.contextTokens });
  if (hold.hold && hold.why === "compaction_applied") return { fire: false, base: { tokensAtLastFlush: input.contextTokens, handoffsSeen: hold.handoffs } };
  if (hold.hold) return { fire: false, base: input.base };
  const fire = budgetTriggerFires({ settings: input.settings, contextTokens: input.contextTokens, tokensAtLastFlush: input.base.tokensAtLastFlush, contextWindow: input.contextWindow });
  return { fire, base: input.base };
}

export interface ColdReplanInput {
  /** Flushes run at all (pruning on, or the thinking strip on for this model). */
  flushesActive: boolean;
  disciplineOn: boolean;
  /** The cache facts say the prefix is already lost. */
  cold: boolean;
  /** A flush is running: it will plan itself. */
  flushInFlight: boolean;
}

/**
 * The cold-cache rule (one copy; the live shell and the replay used to disagree): whenever
 * the cache is cold at a request, re-plan without new summaries before it renders — not only
 * when the gate held something back, since proposals that appeared since the last flush
 * (error purges, chains, the thinking boundary) are free to apply now too. The re-plan is
 * kept only if it changes rendered history (`keepColdPlan`); a boundary move alone waits for
 * the next flush. Measured on the corpus and a generated session: see AGENTS.md / the report.
 */
export function coldReplanDue(input: ColdReplanInput): boolean {
  return input.flushesActive && input.disciplineOn && input.cold && !input.flushInFlight;
}

export function keepColdPlan(before: { rewritesCaused: number }, after: { rewritesCaused: number }): boolean {
  return after.rewritesCaused > before.rewritesCaused;
}
