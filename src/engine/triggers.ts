/**
 * When a flush runs: the one copy of each trigger rule, for the live host and the replay.
 *
 * - request end: an assistant message that stops without tool calls closes the user's request;
 * - budget: inside a tool loop, once the context fills min(fraction × window, maxTokens) tokens
 *   and grew by a quarter of that since the last flush (`src/flush/budget-trigger.ts`); held
 *   where a compaction applies (just below Pi's threshold), re-based after one (`budgetStep`);
 * - inside a loop, when it pays: at a turn end, the loop's older raw outputs (not its last
 *   `keepRecentSteps` steps') are priced as the gate would price stubbing them — the session
 *   model's cache rule and prices, the loop's expected remaining requests — and the flush runs
 *   when that pays, at most once per `minStepsBetween` steps (`loopFlushDue`);
 * - cold cache: the cached prefix is already lost (TTL, model, thinking, tools, compaction),
 *   so every rewrite is free: re-plan before the request renders (see `coldReplanDue`).
 */
import { budgetFlushHold, compactionAfterFlush, type CompactionOutlook } from "../compaction/cooperation.ts";
import { priceFlush } from "../discipline/gate.ts";
import { lastAssistantIndex, messageBlocks, messageTokens } from "../discipline/history-view.ts";
import { loopShapeOf } from "../discipline/loop-horizon.ts";
import { cutFromTimestamp, quantizeBranchBoundary } from "../discipline/quantize.ts";
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import { cachedTokensFromOf, readableAnchors } from "../discipline/rewrite-anchor.ts";
import type { GateDecision } from "../discipline/schema.ts";
import { budgetTriggerFiresFor } from "../flush/budget-trigger.ts";
import { loopCandidates, type LoopCandidates } from "../flush/loop-candidates.ts";
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { seamThroughOf, type KeeperState } from "../state/schema.ts";
import { pruneConfigFrom } from "./config.ts";
import { gateRequestsOf, type DisciplineFacts } from "./decide.ts";

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
export function budgetStep(input: BudgetStepInput): { fire: boolean; base: BudgetBase; held: boolean; why?: "compaction_imminent" | "compaction_applied" } {
  const hold = budgetFlushHold({ outlook: input.compaction, handoffsSeen: input.base.handoffsSeen, contextTokens: input.contextTokens });
  if (hold.hold && hold.why === "compaction_applied") return { fire: false, base: { tokensAtLastFlush: input.contextTokens, handoffsSeen: hold.handoffs }, held: true, why: hold.why };
  if (hold.hold) return { fire: false, base: input.base, held: true, why: hold.why };
  const fire = budgetTriggerFires({ settings: input.settings, contextTokens: input.contextTokens, tokensAtLastFlush: input.base.tokensAtLastFlush, contextWindow: input.contextWindow });
  return { fire, base: input.base, held: false };
}

/** Where the last flush inside a loop ran: the loop (its prompt's timestamp) and how many tool steps it had made. */
export interface LoopFlushMark {
  prompt: number | undefined;
  steps: number;
}

/** The loop the branch ends in, as a mark at its current step (undefined: no running loop). */
export function loopMarkOf(messages: readonly ContextMessage[]): LoopFlushMark | undefined {
  const shape = loopShapeOf(messages);
  if (!shape.running) return undefined;
  return { prompt: shape.loopStart > 0 ? timestampOf(messages[shape.loopStart - 1]!) : undefined, steps: shape.stepIndices.length };
}

export interface LoopFlushInput {
  settings: KeeperSettings;
  /** The branch at the turn end (it ends with the results the model has not answered yet). */
  messages: readonly ContextMessage[];
  keeper: KeeperState;
  /** Tokens each raw message rendered to in the last request (up to its last assistant message); absent: their raw size. */
  sentTokens?: readonly number[];
  /** The cache facts now (the session model's cost model and rule, the seam, a cold cache); absent: Anthropic's prices. */
  facts: DisciplineFacts | undefined;
  /** The last flush inside a loop. */
  last: LoopFlushMark | undefined;
  /**
   * Async compaction's outlook and the context's size now: the compaction it foresees is forecast
   * from the context the flush would leave (`compactionAfterFlush`): still imminent, the flush is
   * held; else the gate counts no more requests than are left before it. Absent: no compaction.
   */
  compaction?: { outlook: CompactionOutlook | undefined; contextTokens: number };
}

export interface LoopFlushVerdict {
  fire: boolean;
  /** Why not, when it does not fire. */
  why?: "off" | "not-in-loop" | "spacing" | "nothing-to-prune" | "frozen" | "compaction-imminent" | "does-not-pay";
  candidates?: LoopCandidates;
  /** The gate's price of stubbing the candidates now. */
  decision?: GateDecision;
}

/**
 * How many times over an in-loop rewrite's saving must repay its cost: the loop's N is an
 * estimate, and a loop may end at its very next step. Measured on the wire benchmark's tuning
 * seeds (default scenario 101, 102; long loops 501–503, async compaction off): a rewrite that
 * merely pays fired at the last step of 10–15-step loops (seed 101: 0.405× bare against 0.394×
 * without the in-loop trigger); twice over, 0.394 · 0.383 (the one rewrite left paid) and the long
 * loops 0.453 on average; three times over, 0.394 · 0.389 (no rewrite) and 0.455.
 */
export const LOOP_FLUSH_PAYBACK = 2;

/**
 * The in-loop trigger: fire when stubbing the running loop's older raw outputs pays for the
 * rewrite it causes — the gate's own price (`priceFlush`) with the rewrite starting at the
 * readable anchor before the first candidate (the seam, the lookback, or the change itself on a
 * provider with automatic prefix caching), N the loop's expected remaining requests
 * (`gateRequestsOf`), the session model's prices, by `LOOP_FLUSH_PAYBACK` times — and the quantized boundary would move (a
 * rewrite moves it in one step; candidates before an unmoved frozen boundary wait). At most one
 * such flush per `minStepsBetween` tool steps of a loop. The flush then decides with its own
 * renders; this is the cheap estimate that starts it.
 */
export function loopFlushDue(input: LoopFlushInput): LoopFlushVerdict {
  const { settings, messages, keeper, facts } = input;
  const config = pruneConfigFrom(settings);
  if (!config.enabled || !config.loopFlush.enabled) return { fire: false, why: "off" };
  const shape = loopShapeOf(messages);
  const mark = loopMarkOf(messages);
  if (!shape.running || !mark) return { fire: false, why: "not-in-loop" };
  const last = input.last;
  if (last && last.prompt === mark.prompt && mark.steps - last.steps < config.loopFlush.minStepsBetween) return { fire: false, why: "spacing" };
  const candidates = loopCandidates({ messages, shape, state: keeper, config });
  if (candidates.position === undefined || candidates.tokensRemoved <= 0) return { fire: false, why: "nothing-to-prune", candidates };
  const cache = settings.cache;
  const after = input.compaction?.outlook ? compactionAfterFlush(input.compaction.outlook, input.compaction.contextTokens, candidates.tokensRemoved) : undefined;
  if (after?.imminent) return { fire: false, why: "compaction-imminent", candidates };
  const cold = facts?.cold === true;
  if (!cold && keeper.frontier.frozenThroughTimestamp !== undefined) {
    const boundary = quantizeBranchBoundary({
      messages,
      unit: { kind: "tokens", keepTailTokens: cache.keepTailTokens, chunkTokens: cache.gridChunkTokens, tokensOf: messageTokens },
      previousFrozenThroughTimestamp: keeper.frontier.frozenThroughTimestamp,
    });
    if (!boundary.moved && candidates.position < cutFromTimestamp(messages, keeper.frontier.frozenThroughTimestamp)) return { fire: false, why: "frozen", candidates };
  }
  const lastSent = Math.max(0, lastAssistantIndex(messages));
  const sent = input.sentTokens && input.sentTokens.length === lastSent ? input.sentTokens : messages.slice(0, lastSent).map(messageTokens);
  const seamThrough = seamThroughOf(keeper.frontier);
  const anchors = readableAnchors({
    seamCut: facts?.seamActive && seamThrough !== undefined ? cutFromTimestamp(messages, seamThrough) : undefined,
    blocks: messages.map(messageBlocks),
    requestEnd: messages.map((m) => !isAssistant(m)),
    trailingBlocks: 0,
    automaticPrefix: facts?.costModel?.rule.mechanism === "automatic-prefix",
  });
  const cachedFrom = cachedTokensFromOf(sent, anchors)(candidates.position);
  // The horizon counts the request about to be sent plus at most `cap` after it (as a flush's gate does).
  const ownCap = facts?.horizonCap ?? cache.horizonCap;
  const cap = after?.requestsLeft === undefined ? ownCap : Math.min(ownCap, after.requestsLeft - 1);
  const session = facts ? estimateRequestHorizon({ requestTimes: facts.requestTimes, ttlMs: facts.ttlMs, cap }).expectedRequests : 1;
  const decision = priceFlush({
    tokensRemoved: candidates.tokensRemoved,
    rewrittenTokens: Math.max(0, cachedFrom - candidates.tokensRemoved),
    expectedRequests: gateRequestsOf({ messages, config, sessionRequests: session, cap }),
    cacheCold: cold,
    ...(facts ? { ttl: facts.ttl } : {}),
    ...(facts?.pricing ? { pricing: facts.pricing } : {}),
    ...(facts?.costModel ? { costModel: facts.costModel } : {}),
    options: { minNetSaving: cache.minNetSaving },
  });
  const pays = decision.apply && decision.numbers.saving >= LOOP_FLUSH_PAYBACK * decision.numbers.rewriteCost;
  return pays ? { fire: true, candidates, decision } : { fire: false, why: "does-not-pay", candidates, decision };
}

/**
 * The tokens an in-loop flush over this branch is expected to remove (its candidates'): what a
 * flush the in-loop trigger started forecasts the compaction from (`compactionAfterFlush`).
 */
export function loopFlushRemoves(input: { settings: KeeperSettings; messages: readonly ContextMessage[]; keeper: KeeperState }): number {
  const config = pruneConfigFrom(input.settings);
  if (!config.enabled || !config.loopFlush.enabled) return 0;
  const shape = loopShapeOf(input.messages);
  return loopCandidates({ messages: input.messages, shape, state: input.keeper, config }).tokensRemoved;
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
