/**
 * Flush planning: the one place where decisions that change rendered history are made.
 *
 *   state + branch (+ closing message) + new summaries  ->  next state + entries to persist
 *
 * Pure: the summarizer already ran (its results come in as `summaries`), the clock comes
 * in as `now`. Everything proposed this flush passes through `boundaryHooks` (the seam for
 * quantized boundaries and profitability gates); whatever a hook holds back is simply
 * proposed again at the next flush, because proposals are recomputed from the branch.
 */
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { type ContextMessage, isAssistant, timestampOf } from "../session/messages.ts";
import type { PruneConfig } from "../prune/config.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import { type KeeperEntry, decodeWith, flushEntryOf } from "../state/entries.ts";
import { BatchSummarySchema, type CompressedChain, type KeeperState, STATE_VERSION, type SummaryRecord } from "../state/schema.ts";
import { type CaptureResult, type SkipReason, captureBatches, withClosingMessage } from "./capture.ts";
import { contentHash } from "./content-hash.ts";
import { keptFactLinesOf, proposeChains } from "./plan-chains.ts";
import { proposeErrorPurges } from "./plan-errors.ts";
import { estimateTokensSaved, type SavingsInput } from "./savings.ts";

/** Mutations a flush wants to apply. */
export interface FlushProposal {
  stubKeys: string[];
  /** Duplicate output key -> key of the identical summarized output. */
  aliases: Record<string, string>;
  purgeErrorKeys: string[];
  chains: CompressedChain[];
  thinkingStripBoundaryTimestamp: number | undefined;
}

export interface BoundaryHookContext {
  state: KeeperState;
  messages: readonly ContextMessage[];
  config: PruneConfig;
  now: number;
}

/** Returns the part of the proposal to apply now (anything else is deferred). */
export type BoundaryHook = (proposal: FlushProposal, ctx: BoundaryHookContext) => FlushProposal;

/** Computes the thinking-strip boundary (the thinking helper's `computeThinkingBoundary`, config bound). */
export type ThinkingBoundaryFn = (input: { assistantTimestamps: number[]; previous: number | undefined }) => number | undefined;

export interface PlanFlushInput {
  state: KeeperState;
  branchMessages: readonly ContextMessage[];
  closingMessage?: ContextMessage;
  /** Summaries of batches from `captureBatches` on the same state and branch. */
  summaries: readonly BatchSummary[];
  config: PruneConfig;
  now: number;
  thinkingBoundary?: ThinkingBoundaryFn;
  boundaryHooks?: readonly BoundaryHook[];
}

export type FlushDecision =
  | { kind: "stub"; key: string }
  | { kind: "alias"; key: string; aliasOf: string }
  | { kind: "keep-raw"; batchKey: string }
  | { kind: "unknown-summary"; batchKey: string }
  | { kind: "invalid-summary"; batchKey: string; error: string }
  | { kind: "skip"; batchKey: string; reason: SkipReason }
  | { kind: "purge-error"; key: string }
  | { kind: "compress-chain"; chainKey: string; calls: number }
  | { kind: "thinking-boundary"; from: number | undefined; to: number | undefined }
  | { kind: "deferred"; what: "stub" | "alias" | "purge-error" | "compress-chain" | "thinking-boundary"; key: string };

export interface FlushPlan {
  nextState: KeeperState;
  entriesToPersist: KeeperEntry[];
  decisions: FlushDecision[];
}

function summaryRecords(batches: ToolBatch[], summaries: readonly BatchSummary[], flushSeq: number, decisions: FlushDecision[]): SummaryRecord[] {
  const byKey = new Map(batches.map((b) => [b.batchKey, b]));
  const out: SummaryRecord[] = [];
  for (const summary of summaries) {
    const batch = byKey.get(summary.batchKey);
    if (!batch) {
      decisions.push({ kind: "unknown-summary", batchKey: summary.batchKey });
      continue;
    }
    const valid = decodeWith(BatchSummarySchema, summary);
    if (!valid.ok) {
      decisions.push({ kind: "invalid-summary", batchKey: summary.batchKey, error: valid.error });
      continue;
    }
    if (summary.source === "raw") decisions.push({ kind: "keep-raw", batchKey: summary.batchKey });
    out.push({
      version: STATE_VERSION,
      batchKey: batch.batchKey,
      summary: valid.value,
      coveredKeys: batch.calls.map((c) => c.occurrenceKey),
      outputHashes: Object.fromEntries(batch.calls.map((c) => [c.occurrenceKey, contentHash(c.resultText)])),
      flushSeq,
    });
  }
  return out;
}

/** Keeps only what was proposed (a hook may hold things back, never invent them). */
function clampToProposal(applied: FlushProposal, proposed: FlushProposal, previousBoundary: number | undefined): FlushProposal {
  const stub = new Set(proposed.stubKeys);
  const purge = new Set(proposed.purgeErrorKeys);
  const chains = new Set(proposed.chains.map((c) => c.chainKey));
  const b = applied.thinkingStripBoundaryTimestamp;
  const boundaryOk = b === proposed.thinkingStripBoundaryTimestamp || b === previousBoundary;
  return {
    stubKeys: applied.stubKeys.filter((k) => stub.has(k)),
    aliases: Object.fromEntries(Object.entries(applied.aliases).filter(([k, v]) => proposed.aliases[k] === v)),
    purgeErrorKeys: applied.purgeErrorKeys.filter((k) => purge.has(k)),
    chains: applied.chains.filter((c) => chains.has(c.chainKey)),
    thinkingStripBoundaryTimestamp: boundaryOk ? b : previousBoundary,
  };
}

function deferredDecisions(proposed: FlushProposal, applied: FlushProposal): FlushDecision[] {
  const out: FlushDecision[] = [];
  const stub = new Set(applied.stubKeys);
  const purge = new Set(applied.purgeErrorKeys);
  const chains = new Set(applied.chains.map((c) => c.chainKey));
  for (const k of proposed.stubKeys) if (!stub.has(k)) out.push({ kind: "deferred", what: "stub", key: k });
  for (const k of Object.keys(proposed.aliases)) if (applied.aliases[k] === undefined) out.push({ kind: "deferred", what: "alias", key: k });
  for (const k of proposed.purgeErrorKeys) if (!purge.has(k)) out.push({ kind: "deferred", what: "purge-error", key: k });
  for (const c of proposed.chains) if (!chains.has(c.chainKey)) out.push({ kind: "deferred", what: "compress-chain", key: c.chainKey });
  if (proposed.thinkingStripBoundaryTimestamp !== applied.thinkingStripBoundaryTimestamp)
    out.push({ kind: "deferred", what: "thinking-boundary", key: String(proposed.thinkingStripBoundaryTimestamp) });
  return out;
}

/** A proposal with everything `applyFlush` needs to turn (a part of) it into a plan. */
export interface FlushDraft {
  proposal: FlushProposal;
  state: KeeperState;
  /** The branch with the closing message, as the next request will carry it. */
  messages: readonly ContextMessage[];
  config: PruneConfig;
  now: number;
  newRecords: SummaryRecord[];
  summaries: Record<string, SummaryRecord>;
  decisions: FlushDecision[];
}

export interface ProposeFlushInput extends Omit<PlanFlushInput, "boundaryHooks"> {
  /** `captureBatches` over the same state and branch, when the caller already ran it (capture once). */
  capture?: CaptureResult;
}

/** Everything this flush would change, before any gate holds a part of it back. */
export function proposeFlush(input: ProposeFlushInput): FlushDraft {
  const { state, config, now } = input;
  const decisions: FlushDecision[] = [];
  const messages = withClosingMessage(input.branchMessages, input.closingMessage);
  const pairing = pairToolCalls(messages);
  const protection = protectionMatcher(config);
  const frontier = state.frontier;
  const flushSeq = frontier.flushSeq + 1;

  const capture = input.capture ?? captureBatches({ branchMessages: messages, state, config });
  for (const skip of capture.skipped) decisions.push({ kind: "skip", batchKey: skip.batchKey, reason: skip.reason });
  const newRecords = config.enabled ? summaryRecords(capture.batches, input.summaries, flushSeq, decisions) : [];
  const summaries: Record<string, SummaryRecord> = { ...state.summaries };
  for (const r of newRecords) summaries[r.batchKey] = r;

  // Stubs: every live, answered key a non-raw summary covers that is not a stub yet.
  const answered = new Set(pairing.calls.filter((c) => c.resultIndex !== undefined).map((c) => c.key));
  const stubbed = new Set(frontier.stubbedKeys);
  const stubKeys: string[] = [];
  for (const r of Object.values(summaries)) {
    if (r.summary.source === "raw") continue;
    for (const k of r.coveredKeys) if (answered.has(k) && !stubbed.has(k)) stubKeys.push(k);
  }
  const aliases: Record<string, string> = {};
  for (const d of capture.duplicates) aliases[d.occurrenceKey] = d.aliasOf;

  const purgeErrorKeys = config.enabled
    ? proposeErrorPurges({ messages, pairing, alreadyPurged: new Set(frontier.purgedErrorKeys), config, protection })
    : [];
  const chains = config.enabled
    ? proposeChains({
        messages,
        pairing,
        summaries,
        aliases: { ...frontier.aliases, ...aliases },
        existingChainKeys: new Set(frontier.compressedChains.map((c) => c.chainKey)),
        existingMembers: new Set(frontier.compressedChains.flatMap((c) => c.memberKeys)),
        keptLines: keptFactLinesOf(frontier.compressedChains),
        config,
        protection,
      })
    : [];

  const previousBoundary = frontier.thinkingStripBoundaryTimestamp;
  const assistantTimestamps = messages.filter(isAssistant).map((m) => timestampOf(m) ?? -1);
  const thinkingStripBoundaryTimestamp = input.thinkingBoundary
    ? input.thinkingBoundary({ assistantTimestamps, previous: previousBoundary })
    : previousBoundary;

  const proposal: FlushProposal = { stubKeys, aliases, purgeErrorKeys, chains, thinkingStripBoundaryTimestamp };
  return { proposal, state, messages, config, now, newRecords, summaries, decisions };
}

export interface ApplyFlushOptions {
  /** The part of the proposal to apply (default: all of it); clamped to the proposal. */
  applied?: FlushProposal;
  /**
   * The frozen boundary cache discipline persists (undefined: unchanged). When nothing else
   * changes, its move is a flush of its own: a flush entry holding only its frontier, at the next `flushSeq`.
   */
  frozenThroughTimestamp?: number;
  /** Where the seam mark goes until the next flush (undefined: unchanged); persisted like the frozen boundary. */
  seamThroughTimestamp?: number;
  /** Renders for the savings estimate (default `renderContext`); injected to count renders. */
  render?: SavingsInput["render"];
  /** False: a trial state that is measured, never persisted: no savings estimate, no entry. */
  measure?: boolean;
  /** The savings estimate already measured (the gate's renders measure it): no render here. */
  tokensSaved?: number;
}

/** The plan for the applied part of a draft: next state and the entries to persist, built here only. */
export function applyFlush(draft: FlushDraft, options: ApplyFlushOptions = {}): FlushPlan {
  const { state, messages, config, now, newRecords, summaries, proposal } = draft;
  const frontier = state.frontier;
  const flushSeq = frontier.flushSeq + 1;
  const previousBoundary = frontier.thinkingStripBoundaryTimestamp;
  const applied = options.applied ? clampToProposal(options.applied, proposal, previousBoundary) : proposal;
  const decisions = [...draft.decisions, ...deferredDecisions(proposal, applied)];
  const frozen = options.frozenThroughTimestamp;
  const frozenMoves = frozen !== undefined && frontier.frozenThroughTimestamp !== frozen;
  const seam = options.seamThroughTimestamp;
  const seamMoves = seam !== undefined && frontier.seamThroughTimestamp !== seam;
  const discipline = { ...(frozenMoves ? { frozenThroughTimestamp: frozen } : {}), ...(seamMoves ? { seamThroughTimestamp: seam } : {}) };

  const boundaryMoved = applied.thinkingStripBoundaryTimestamp !== previousBoundary;
  const aliasCount = Object.keys(applied.aliases).length;
  const rewrites = applied.stubKeys.length + aliasCount + applied.purgeErrorKeys.length + applied.chains.length;
  // The first flush of a branch is always persisted: it marks the branch as flushed
  // (`flushSeq > 0`), which the thinking strip reads as "no boundary yet = strip nothing".
  if (frontier.flushSeq > 0 && newRecords.length === 0 && rewrites === 0 && !boundaryMoved) {
    if (!frozenMoves && !seamMoves) return { nextState: state, entriesToPersist: [], decisions };
    const moved = { ...frontier, flushSeq, lastFlushAt: now, ...discipline };
    const persisted = flushEntryOf({ previous: state, frontier: moved, summaries: [] });
    return { nextState: { ...state, frontier: moved, frontierChain: persisted.chain }, entriesToPersist: [persisted.entry], decisions };
  }

  for (const k of applied.stubKeys) decisions.push({ kind: "stub", key: k });
  for (const [k, v] of Object.entries(applied.aliases)) decisions.push({ kind: "alias", key: k, aliasOf: v });
  for (const k of applied.purgeErrorKeys) decisions.push({ kind: "purge-error", key: k });
  for (const c of applied.chains) decisions.push({ kind: "compress-chain", chainKey: c.chainKey, calls: c.memberKeys.length });
  if (boundaryMoved) decisions.push({ kind: "thinking-boundary", from: previousBoundary, to: applied.thinkingStripBoundaryTimestamp });

  const nextFrontier = {
    ...frontier,
    flushSeq,
    lastFlushAt: now,
    stubbedKeys: [...frontier.stubbedKeys, ...applied.stubKeys],
    aliases: { ...frontier.aliases, ...applied.aliases },
    purgedErrorKeys: [...frontier.purgedErrorKeys, ...applied.purgeErrorKeys],
    compressedChains: [...frontier.compressedChains, ...applied.chains],
    thinkingStripBoundaryTimestamp: applied.thinkingStripBoundaryTimestamp,
    ...discipline,
  };
  if (nextFrontier.thinkingStripBoundaryTimestamp === undefined) delete nextFrontier.thinkingStripBoundaryTimestamp;
  const withoutStats: KeeperState = { ...state, frontier: nextFrontier, summaries };

  const s = state.stats;
  const nextStats = {
    ...s,
    flushes: s.flushes + 1,
    rewritesCaused: s.rewritesCaused + (rewrites > 0 || boundaryMoved ? 1 : 0),
    stubbedResults: s.stubbedResults + applied.stubKeys.length + aliasCount,
    purgedErrors: s.purgedErrors + applied.purgeErrorKeys.length,
    compressedChains: s.compressedChains + applied.chains.length,
    tokensSavedEstimate:
      s.tokensSavedEstimate +
      (options.measure === false ? 0 : (options.tokensSaved ?? estimateTokensSaved({ messages, before: state, after: withoutStats, config, render: options.render }))),
    summarizerInputTokens: s.summarizerInputTokens + newRecords.reduce((n, r) => n + r.summary.inputTokens, 0),
    summarizerOutputTokens: s.summarizerOutputTokens + newRecords.reduce((n, r) => n + r.summary.outputTokens, 0),
    summarizerCost: s.summarizerCost + newRecords.reduce((n, r) => n + r.summary.cost, 0),
  };
  // A trial state is rendered, never persisted: no entry (and no frontier delta) to build for it.
  if (options.measure === false) return { nextState: { ...withoutStats, stats: nextStats }, entriesToPersist: [], decisions };
  const persisted = flushEntryOf({ previous: state, frontier: nextFrontier, summaries: newRecords, stats: nextStats });
  const nextState: KeeperState = { ...withoutStats, stats: nextStats, frontierChain: persisted.chain };
  return { nextState, entriesToPersist: [persisted.entry], decisions };
}

/** Propose, pass the proposal through `boundaryHooks` in order, apply (tests and simple callers). */
export function planFlush(input: PlanFlushInput): FlushPlan {
  const draft = proposeFlush(input);
  const previousBoundary = draft.state.frontier.thinkingStripBoundaryTimestamp;
  let applied = draft.proposal;
  for (const hook of input.boundaryHooks ?? []) {
    applied = clampToProposal(hook(applied, { state: draft.state, messages: draft.messages, config: draft.config, now: draft.now }), applied, previousBoundary);
  }
  return applyFlush(draft, { applied });
}
