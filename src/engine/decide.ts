/**
 * The gate of a flush (cache discipline), one pure decision over the flush's draft:
 * quantized boundary → eligible mutations → piggybacking + profitability gate → the part of
 * the proposal to apply, plus the gate log and the frozen boundary to persist. The engine's
 * flush (`flush.ts`) calls it once, between propose and apply.
 *
 * Per mutation (see proposal-mutations.ts): where the next request first changes, what it
 * removes. Eligible while the cache is warm: mutations that end before the quantized boundary
 * (frozen history advances only at grid steps). On a cold cache every visible mutation is
 * due and the gate prices the rewrite at zero. Mutations inside the running tool loop are
 * invisible to the next request and wait for the flush that ends the loop; mutations that
 * change no byte are applied; outputs the model has not answered yet (after the last
 * assistant message) are never hidden before it saw them once. "Forced": state already decided earlier that becomes visible
 * now (a finished loop whose stubs the loop guard held back) — history changes from there
 * anyway, so due mutations after it ride along.
 *
 * The rewrite's real start is the nearest readable cache entry before the change
 * (rewrite-anchor.ts): the seam, a recent request end within the lookback, or nothing. On a
 * model whose reasoning is bound to its prefix (`facts.costModel.reasoningBound`), a start also
 * costs the thinking after the first changed message (reasoning-cost.ts), cold cache or not.
 */
import { cachedTokensFromOf, readableAnchors } from "../discipline/rewrite-anchor.ts";
import { seamPointTimestamp } from "../discipline/seam-point.ts";
import { type CacheTtl, priceFlush } from "../discipline/gate.ts";
import {
  endsWithAssistant,
  lastAssistantIndex,
  messageBlocks,
  messageTokens,
  nextPromptProbe,
  slotsByRawIndex,
  slotsDiffer,
} from "../discipline/history-view.ts";
import { planPiggyback, type DueMutation, type PiggybackRole } from "../discipline/piggyback.ts";
import { thinkingDroppedAfter } from "../discipline/reasoning-cost.ts";
import { measureMutations, restrictProposal, type ProposalMutation } from "../discipline/proposal-mutations.ts";
import { cutFromTimestamp, quantizeBranchBoundary, type BranchBoundary } from "../discipline/quantize.ts";
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import { loopExpectedRequests, loopShapeOf } from "../discipline/loop-horizon.ts";
import type { PruneConfig } from "../prune/config.ts";
import type { GateDecision, GateLogEntry } from "../discipline/schema.ts";
import type { PendingRewrite } from "../discipline/cold-cache.ts";
import { laterLossChance, lossChance, type ObservedLosses } from "../discipline/observed-loss.ts";
import type { CostModel } from "../cache/cost-model.ts";
import type { CachePricing } from "../cache/pricing.ts";
import type { FlushDraft, FlushProposal } from "../flush/plan.ts";
import { proposeChains } from "../flush/plan-chains.ts";
import { recentStepsFrom } from "../flush/loop-candidates.ts";
import { currentLoopStart, pairToolCalls } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { seamThroughOf, type KeeperState } from "../state/schema.ts";
import type { StrippedFrom } from "./render.ts";

export type CacheSettings = KeeperSettings["cache"];

/** What the edge knows about the cache at the flush. */
export interface DisciplineFacts {
  /** Send times (ms) of this session's main requests so far, oldest first. */
  requestTimes: readonly number[];
  /** The cached prefix is already lost (cold-cache.ts): every rewrite is free. */
  cold: boolean;
  ttl: CacheTtl;
  ttlMs: number;
  /** Context size and window now, for relief under pressure. */
  context?: { tokens: number; window: number };
  /** The last request carried a seam mark at the persisted frozen boundary. */
  seamActive: boolean;
  pricing?: CachePricing;
  /** The session model's cost model (cache/cost-model.ts): its prices and cache rule; wins over `pricing`. */
  costModel?: CostModel;
  /** Most future requests the gate counts (request-horizon.ts; default 30). */
  horizonCap?: number;
  /** Unannounced cache losses seen so far (observed-loss.ts): priced as a chance of a free rewrite. */
  observedLosses?: ObservedLosses;
}

export type MutationVerdict = PiggybackRole | "no-op" | "invisible" | "frozen" | "unseen";

export interface DisciplineOutcome {
  boundary: BranchBoundary | undefined;
  /** Where the seam mark goes until the next flush (seam-point.ts; undefined: no seam). */
  seamThroughTimestamp: number | undefined;
  /** Gate decisions of this flush (at most one), for `/keeper why`. */
  log: GateLogEntry[];
  verdicts: Record<string, MutationVerdict>;
  applied: string[];
  deferred: string[];
  /** The earliest rewrite still waiting, for cache-warming decisions. */
  pending: PendingRewrite | undefined;
  /** Where the next request rewrites the cached prefix (what this flush applied, or state decided earlier not sent yet), for cache-warming decisions. */
  unsent: PendingRewrite | undefined;
  expectedRequests: number;
}

export interface DecideFlushInput {
  cache: CacheSettings;
  facts: DisciplineFacts;
  now: number;
  /** Names the flush in the log ("flush 12 (request-end)"). */
  label: string;
  /** The flush's proposal over its branch (`proposeFlush`). */
  draft: FlushDraft;
  /** The state with the whole proposal applied (measured, never persisted). */
  trial: KeeperState;
  /** The thinking strip runs on this model (its boundary moves at the next flush). */
  thinkingStripOn: boolean;
  /** The `context` render for a message array and a state; it records what its thinking strip replaced in `strippedFrom`. */
  render: (messages: ContextMessage[], state: KeeperState, strippedFrom: StrippedFrom) => ContextMessage[];
  /**
   * What the last request carried, when the caller holds it: the engine's render of the branch
   * up to the last assistant message, under whatever state it was rendered (a flush adopted
   * since then is a rewrite the next request makes anyway: it shows as a forced bust, and what
   * lies after it rides along). Absent (no request of this branch rendered since a restore, a
   * compaction or a tree move): the cache is taken to hold what the current state renders of
   * that prefix, the next request's own prefix — no render of its own.
   */
  sent?: readonly ContextMessage[];
}

const suffixSums = (xs: readonly number[]): number[] => {
  const out = new Array<number>(xs.length + 1).fill(0);
  for (let i = xs.length - 1; i >= 0; i--) out[i] = out[i + 1] + xs[i];
  return out;
};

function decide(input: DecideFlushInput): FlushGateDecision {
  const { facts, cache, trial, draft } = input;
  const { proposal, messages, state } = draft;
  const previousThinking = state.frontier.thinkingStripBoundaryTimestamp;
  const boundary = quantizeBranchBoundary({
    messages,
    unit: { kind: "tokens", keepTailTokens: cache.keepTailTokens, chunkTokens: cache.gridChunkTokens, tokensOf: messageTokens },
    previousFrozenThroughTimestamp: state.frontier.frozenThroughTimestamp,
  });

  const world = endsWithAssistant(messages) ? [...messages, nextPromptProbe()] : [...messages];
  const lastSent = Math.max(0, lastAssistantIndex(messages));
  // What the thinking strip replaced in the gate's two renders: the savings estimate leaves the strip out.
  const stripped: StrippedFrom = new Map();
  const without = slotsByRawIndex(messages, input.render(world, state, stripped));
  const sent = input.sent ? slotsByRawIndex(messages, [...input.sent]) : without;
  const withAll = slotsByRawIndex(messages, input.render(world, trial, stripped));
  const withoutStrip = (m: ContextMessage): ContextMessage => stripped.get(m) ?? m;
  const mutations = measureMutations({ proposal, messages, previousThinkingBoundary: previousThinking, without, withAll, withoutStrip });

  let forcedFrom: number | undefined;
  for (let i = 0; i < lastSent; i++) {
    if (slotsDiffer(sent[i], without[i])) {
      forcedFrom = i;
      break;
    }
  }
  const loopStart = currentLoopStart(world);
  // The frozen history of the last request: byte-identical until the cache goes cold. At a final
  // answer, a boundary a flush inside the loop moved into it does not freeze the loop's own chain:
  // that loop collapses at its final answer (its rewrite starts at the loop anyway).
  const frozenThrough = state.frontier.frozenThroughTimestamp === undefined ? 0 : cutFromTimestamp(messages, state.frontier.frozenThroughTimestamp);
  const frozenCut = endsWithAssistant(messages) ? Math.min(frozenThrough, currentLoopStart(messages)) : frozenThrough;
  const verdicts: Record<string, MutationVerdict> = {};
  const due: ProposalMutation[] = [];
  const lastAssistant = lastAssistantIndex(messages);
  for (const m of mutations) {
    // Outputs after the last assistant message have not reached the model yet: never hidden before it saw them once.
    if (m.end !== undefined && lastAssistant >= 0 && m.end > lastAssistant) verdicts[m.id] = "unseen";
    else if (m.position === undefined) verdicts[m.id] = m.range.some((i) => i >= loopStart) ? "invisible" : "no-op";
    else if (facts.cold || boundary.moved || m.position >= frozenCut) due.push(m);
    else verdicts[m.id] = "frozen";
  }

  const sentTokens = sent.slice(0, lastSent).map((s) => s.tokens);
  const sentFrom = suffixSums(sentTokens);
  const seamThrough = seamThroughOf(state.frontier);
  const seamCut = facts.seamActive && seamThrough !== undefined ? cutFromTimestamp(messages, seamThrough) : undefined;
  const anchors = readableAnchors({
    seamCut,
    blocks: messages.map(messageBlocks),
    requestEnd: messages.map((m) => !isAssistant(m)),
    trailingBlocks: world.length - messages.length,
    automaticPrefix: facts.costModel?.rule.mechanism === "automatic-prefix",
  });
  const cachedTokensFrom = cachedTokensFromOf(sentTokens, anchors);
  const losses = facts.observedLosses;
  const horizon = estimateRequestHorizon({
    requestTimes: facts.requestTimes,
    ttlMs: facts.ttlMs,
    cap: facts.horizonCap ?? cache.horizonCap,
  });
  const startsPrompt = world.length > messages.length || (messages.length > 0 && !isAssistant(messages[messages.length - 1]) && currentLoopStart(messages) === messages.length);
  const expectedRequests = gateRequestsOf({ messages, config: draft.config, sessionRequests: horizon.expectedRequests, cap: facts.horizonCap ?? cache.horizonCap });
  const gate = {
    expectedRequests,
    cacheCold: facts.cold,
    ...(losses ? { coldChance: lossChance(startsPrompt ? losses.prompt : losses.loop), futureColdChance: laterLossChance(losses) } : {}),
    ttl: facts.ttl,
    ...(facts.pricing ? { pricing: facts.pricing } : {}),
    ...(facts.costModel ? { costModel: facts.costModel } : {}),
    ...(facts.context ? { context: facts.context } : {}),
    options: { minNetSaving: cache.minNetSaving },
  };
  const forcedId = "forced:state";
  const dueMutations: DueMutation[] = due.map((m) => ({
    id: m.id,
    kind: m.kind === "alias" ? "stub" : m.kind,
    position: m.position!,
    tokensRemoved: Math.max(0, m.tokensRemoved),
  }));
  if (forcedFrom !== undefined && !facts.cold) dueMutations.push({ id: forcedId, kind: "stub", position: forcedFrom, tokensRemoved: 0, forced: true });
  // Reasoning bound to its prefix: what a start drops, in history as the flush would send it.
  const reasoningDroppedAfter = facts.costModel?.reasoningBound ? thinkingDroppedAfter(withAll) : undefined;
  const pp = planPiggyback({ due: dueMutations, cachedTokensFrom, gate, ...(reasoningDroppedAfter ? { reasoningDroppedAfter } : {}) });
  for (const [id, role] of Object.entries(pp.roles)) if (id !== forcedId) verdicts[id] = role;

  const appliedIds = new Set(Object.entries(verdicts).filter(([, v]) => v === "forced" || v === "rides-along" || v === "pays-alone" || v === "no-op").map(([id]) => id));
  const applied = mutations.filter((m) => appliedIds.has(m.id)).map((m) => m.id);
  const deferred = mutations.filter((m) => !appliedIds.has(m.id)).map((m) => m.id);

  const log: GateLogEntry[] = [];
  const entry = (position: number, mutationIds: string[], decision: GateDecision): GateLogEntry => ({ at: input.now, label: input.label, mutationIds, position, decision });
  if (pp.chosen) log.push(entry(pp.chosen.position, pp.chosen.mutationIds, pp.chosen.decision));
  else if (pp.forcedFrom !== undefined && pp.apply.length > 1) {
    const riders = pp.apply.filter((m) => m.id !== forcedId);
    const removed = riders.reduce((s, m) => s + m.tokensRemoved, 0);
    const priced = priceFlush({
      ...gate,
      tokensRemoved: removed,
      rewrittenTokens: Math.max(0, cachedTokensFrom(pp.forcedFrom) - removed),
      ...(reasoningDroppedAfter ? { reasoningDropped: reasoningDroppedAfter(pp.forcedFrom) } : {}),
    });
    log.push(entry(pp.forcedFrom, riders.map((m) => m.id), { ...priced, apply: true, reason: "forced" }));
  } else if (pp.priced.length > 0) {
    const best = pp.priced.reduce((a, b) => (b.decision.numbers.net > a.decision.numbers.net ? b : a));
    log.push(entry(best.position, best.mutationIds, best.decision));
  }

  const waiting = mutations.filter((m) => !appliedIds.has(m.id) && m.position !== undefined);
  const firstWaiting = waiting.length > 0 ? Math.min(...waiting.map((m) => m.position!)) : undefined;
  const rewriteFrom = (first: number | undefined): PendingRewrite | undefined =>
    first === undefined ? undefined : { cachedPrefixTokens: sentFrom[0], keptPrefixTokens: sentFrom[0] - cachedTokensFrom(first) };
  const pending = rewriteFrom(firstWaiting);
  // What the next request rewrites: the applied mutations (their first change) and the state decided earlier that it carries (forced).
  const appliedAt = mutations.filter((m) => appliedIds.has(m.id) && m.position !== undefined && verdicts[m.id] !== "no-op").map((m) => m.position!);
  const firstUnsent = [...appliedAt, ...(forcedFrom !== undefined ? [forcedFrom] : [])];
  const unsent = rewriteFrom(firstUnsent.length > 0 ? Math.min(...firstUnsent) : undefined);

  const appliedProposal = restrictProposal(proposal, appliedIds, previousThinking);
  return {
    applied: appliedProposal,
    outcome: {
      boundary,
      seamThroughTimestamp: seamPointTimestamp({
        messages,
        waitingAt: [...waiting.map((m) => m.position!), ...nextChainStarts(draft, world, loopStart)],
        ...(seamInsideLoop(draft) ? { runningLoopStart: loopStart } : {}),
        thinkingBoundaryTimestamp: appliedProposal.thinkingStripBoundaryTimestamp,
        thinkingStripOn: input.thinkingStripOn,
        frozenThroughTimestamp: boundary.frozenThroughTimestamp,
      }),
      log,
      verdicts,
      applied,
      deferred,
      pending,
      unsent,
      expectedRequests,
    },
    tokensSaved: savedByApplied(mutations, appliedIds),
  };
}

/**
 * The savings estimate of the applied part, from the gate's own two renders (no render of its
 * own): the serialized characters the applied pruning mutations remove from the next request,
 * / 4, with every stripped message read as it was before the strip (`withoutStrip`), so the
 * thinking strip is not included (as in `src/flush/savings.ts`). Exact unless an applied and
 * a held-back pruning mutation change the same message (it is then split evenly between them).
 */
function savedByApplied(mutations: readonly ProposalMutation[], appliedIds: ReadonlySet<string>): number {
  let chars = 0;
  for (const m of mutations) if (appliedIds.has(m.id)) chars += m.jsonCharsRemoved;
  return Math.max(0, Math.round(chars / 4));
}

export interface FlushGateDecision {
  applied: FlushProposal;
  outcome: DisciplineOutcome;
  /** The applied part's savings estimate (tokens), measured from the gate's renders. */
  tokensSaved: number;
}

/** A flush inside a running loop with the in-loop trigger on: the seam serves the loop's next flush. */
function seamInsideLoop(draft: FlushDraft): boolean {
  return draft.config.enabled && draft.config.loopFlush.enabled && loopShapeOf(draft.messages).running;
}

/**
 * Raw indices where the next flush is expected to change history: the chains proposed over the
 * world (the next prompt included) beyond the ones this draft proposes; inside a running loop,
 * with the in-loop trigger on, where the next flush inside it starts stubbing (the loop's recent
 * steps this flush kept raw: the seam then sits inside the loop, and each rewrite there re-sends
 * only what came after the last one), else with `rollingWindow` 0 the loop's own chain (it
 * collapses at the loop's final answer).
 */
function nextChainStarts(draft: FlushDraft, world: readonly ContextMessage[], loopStart: number): number[] {
  const { config, state, proposal, messages } = draft;
  const shape = loopShapeOf(messages);
  const inLoop = seamInsideLoop(draft) ? [recentStepsFrom(shape, Math.max(1, config.loopFlush.keepRecentSteps), messages.length)] : [];
  if (!config.enabled || !config.chainCompression.enabled) return inLoop;
  const running = inLoop.length > 0 ? inLoop : config.chainCompression.rollingWindow === 0 && !endsWithAssistant(messages) && loopStart < messages.length ? [loopStart] : [];
  const next = proposeChains({
    messages: world,
    pairing: pairToolCalls(world),
    summaries: draft.summaries,
    aliases: { ...state.frontier.aliases, ...proposal.aliases },
    existingChainKeys: new Set([...state.frontier.compressedChains, ...proposal.chains].map((c) => c.chainKey)),
    existingMembers: new Set([...state.frontier.compressedChains, ...proposal.chains].flatMap((c) => c.memberKeys)),
    config,
    protection: protectionMatcher(config),
  });
  return [...running, ...next.map((c) => messages.findIndex((m) => timestampOf(m) === c.fromTimestamp)).filter((i) => i >= 0)];
}

/**
 * N, the requests the gate counts a removal read by. A flush at a prompt start or a final answer:
 * the session's request horizon. A flush inside a running tool loop (the branch ends with results
 * the model has not answered): the loop's expected remaining requests (loop-horizon.ts), since
 * the loop's own chain collapses at its final answer (chain compression on, `rollingWindow` 0);
 * with chains kept longer its stubs are read by the session's later requests too.
 */
export function gateRequestsOf(input: { messages: readonly ContextMessage[]; config: PruneConfig; sessionRequests: number; cap: number }): number {
  const shape = loopShapeOf(input.messages);
  if (!shape.running) return input.sessionRequests;
  const inLoop = loopExpectedRequests({ stepsSoFar: shape.stepIndices.length, pastLoopSteps: shape.pastLoopSteps, cap: input.cap });
  const chains = input.config.chainCompression;
  const collapsesAtEnd = input.config.enabled && chains.enabled && chains.rollingWindow === 0;
  return collapsesAtEnd ? inLoop : inLoop + Math.max(0, input.sessionRequests - 1);
}

/** The decision for one draft under cache discipline, from its renders. */
export function decideFlush(input: DecideFlushInput): FlushGateDecision {
  return decide(input);
}
