/**
 * Edge: pruning for one session runtime. Holds the persisted state in memory, renders
 * through the pure core on every request, and runs flushes (capture → summarize → plan →
 * persist) in the background so nobody waits for a summary. A finished flush takes effect
 * at the next request; between flushes renders are byte-stable.
 */
import { estimateTokens, type ContextEvent, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FlushDecision, FlushPlan } from "../flush/plan.ts";
import { thinkingPolicyFor } from "../keeper/config.ts";
import { planDisciplinedFlush, type DisciplineFacts, type DisciplineOutcome } from "../keeper/discipline.ts";
import { budgetTriggerFires, captureForFlush, planKeeperFlush, type FlushInputs } from "../keeper/flush.ts";
import { keeperRender } from "../keeper/render.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { restoreState } from "../state/entries.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { CUSTOM_TYPE_RECALL, recallDelta, restoreRecallIndex } from "../recall/recall-entries.ts";
import { prunedCallsOf } from "../recall/pruned-calls.ts";
import { emptyRecallIndex, recordOriginals, writeSpills, type RecallIndex } from "../recall/recall-index.ts";
import { summarizeForFlush } from "./summarize-effect.ts";
import { spillPathFor, writeSpillFile } from "./spill-files.ts";

/** "cold": a re-plan without new summaries at a request whose cache is already lost. */
export type FlushTrigger = "request-end" | "budget" | "manual" | "cold";

export interface FlushReport {
  trigger: FlushTrigger;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
}

export interface PruningRuntimeDeps {
  pi: ExtensionAPI;
  settings: () => KeeperSettings;
  /** Status line text (already gated on settings by the caller). */
  status: (ctx: ExtensionContext, text: string | undefined) => void;
  notify: (ctx: ExtensionContext, text: string, level: "info" | "warning") => void;
  now?: () => number;
  /** Cache discipline's edge (request facts, decision log); absent: flushes apply everything. */
  discipline?: {
    facts(ctx: ExtensionContext): DisciplineFacts;
    recordFlush(outcome: DisciplineOutcome, rewrote: boolean): void;
  };
}

export interface PruningRuntime {
  restore(ctx: ExtensionContext): void;
  afterCompaction(ctx: ExtensionContext): void;
  render(event: ContextEvent, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
  onAssistantMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  onTurnEnd(ctx: ExtensionContext): void;
  flushNow(ctx: ExtensionContext): Promise<FlushReport | undefined>;
  /** Let an in-flight flush finish (its summarizer is aborted first, so it falls back fast). */
  shutdown(): Promise<void>;
  state(): KeeperState;
  recallIndex(): RecallIndex;
  lastReport(): FlushReport | undefined;
  diagnostics(): string[];
  busy(): boolean;
}

export function modelIdentity(ctx: ExtensionContext): { provider: string; id: string; api: string } | undefined {
  const m = ctx.model;
  return m ? { provider: m.provider, id: m.id, api: m.api } : undefined;
}

/** Messages Pi would put in context now: the active branch, compactions and edits applied. */
export function contextMessagesOf(ctx: ExtensionContext): ContextMessage[] {
  return ctx.sessionManager.buildSessionProjection().messages as ContextMessage[];
}

function tokensOf(messages: readonly ContextMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m as Parameters<typeof estimateTokens>[0]);
  return n;
}

/** `keeper: context 182k → 64k` — what the next request carries with and without the keeper. */
function contextStatus(raw: ContextMessage[], rendered: ContextMessage[]): string | undefined {
  if (rendered === raw) return undefined;
  const k = (n: number) => `${Math.round(n / 1000)}k`;
  return `keeper: context ${k(tokensOf(raw))} → ${k(tokensOf(rendered))}`;
}

export function createPruningRuntime(deps: PruningRuntimeDeps): PruningRuntime {
  const now = deps.now ?? (() => Date.now());
  let state: KeeperState = emptyState();
  let recall: RecallIndex = emptyRecallIndex();
  let diagnostics: string[] = [];
  let report: FlushReport | undefined;
  let inFlight: Promise<FlushReport | undefined> | undefined;
  let abort: AbortController | undefined;
  let tokensAtLastFlush = 0;
  /** A trigger that arrived while a flush ran: it runs right after, with its closing message. */
  let queued: { trigger: FlushTrigger; ctx: ExtensionContext; closingMessage?: ContextMessage } | undefined;
  const summaryCache = new Map<string, BatchSummary>();
  const notices = new Set<string>();

  /** Flushes run when pruning is on, or when the thinking strip is on for this model (its boundary moves only at flushes). */
  const active = (ctx: ExtensionContext) => {
    const s = deps.settings();
    return s.enabled && (s.pruning.enabled || thinkingPolicyFor(s, modelIdentity(ctx)).strip);
  };
  const disciplined = () => deps.discipline !== undefined && deps.settings().cache.discipline;

  /** The flush plan, through cache discipline when it is on. */
  function planFor(inputs: FlushInputs & { summaries: readonly BatchSummary[] }, ctx: ExtensionContext, label: string): FlushPlan {
    const at = now();
    if (!disciplined() || !deps.discipline) return planKeeperFlush({ ...inputs, now: at });
    const d = planDisciplinedFlush({
      cache: inputs.settings.cache,
      facts: deps.discipline.facts(ctx),
      now: at,
      label,
      plan: (boundaryHooks) => planKeeperFlush({ ...inputs, now: at, boundaryHooks }),
      render: (messages, s) => keeperRender({ messages, state: s, settings: inputs.settings, model: inputs.model }),
    });
    deps.discipline.recordFlush(d.outcome, d.plan.nextState.stats.rewritesCaused > inputs.state.stats.rewritesCaused);
    return d.plan;
  }

  /** Persist what the recall index gained and the plan's entries, then adopt both. */
  function commit(nextRecall: RecallIndex, plan: FlushPlan): void {
    const recallAdded = recallDelta(recall, nextRecall);
    if (recallAdded) deps.pi.appendEntry(CUSTOM_TYPE_RECALL, recallAdded);
    recall = nextRecall;
    for (const entry of plan.entriesToPersist) deps.pi.appendEntry(entry.customType, entry.data);
    state = plan.nextState;
  }

  /**
   * The cache is already lost (TTL, model, thinking level, tools, compaction): apply what
   * waits, synchronously and without the summarizer (summaries of earlier flushes are in the
   * state), before this request renders.
   */
  function coldReplan(ctx: ExtensionContext): void {
    if (!active(ctx) || !disciplined() || inFlight || !deps.discipline?.facts(ctx).cold) return;
    const settings = deps.settings();
    const branchMessages = contextMessagesOf(ctx);
    const plan = planFor({ state, branchMessages, settings, model: modelIdentity(ctx), summaries: [] }, ctx, `flush ${state.stats.flushes + 1} (cold)`);
    // Only a re-plan that changes history is worth persisting here; a boundary move waits for the next flush.
    if (plan.nextState.stats.rewritesCaused === state.stats.rewritesCaused) return;
    const recorded = recordOriginals(recall, { calls: prunedCallsOf(branchMessages, plan.nextState) });
    commit(recorded.index, plan);
  }

  async function runFlush(trigger: FlushTrigger, ctx: ExtensionContext, closingMessage?: ContextMessage): Promise<FlushReport> {
    const started = now();
    const settings = deps.settings();
    const model = modelIdentity(ctx);
    const branchMessages = contextMessagesOf(ctx);
    // A compaction applied as a turn_end draft fires no session_compact: drop what left the context here.
    state = dropStateOutsideContext(state, liveOccurrenceKeys(branchMessages));
    // A queued flush may run after Pi persisted its closing message: never count it twice.
    const closingTs = closingMessage === undefined ? undefined : timestampOf(closingMessage);
    const persisted = closingTs !== undefined && branchMessages.some((m) => m.role === "assistant" && timestampOf(m) === closingTs);
    const inputs = { state, branchMessages, closingMessage: persisted ? undefined : closingMessage, settings, model };
    const capture = captureForFlush(inputs);
    abort = new AbortController();
    const summaries = await summarizeForFlush({
      ctx,
      settings,
      batches: capture.batches,
      cache: summaryCache,
      signal: abort.signal,
      requestFacts: deps.discipline?.facts(ctx),
      onProgress: (p) => deps.status(ctx, `keeper: ${p.label}`),
      onNotice: (text) => {
        if (notices.has(text)) return;
        notices.add(text);
        deps.notify(ctx, text, "warning");
      },
    });
    abort = undefined;
    // Plan against the state as it is now (a flush never overlaps another one).
    const plan = planFor({ ...inputs, state, summaries }, ctx, `flush ${state.stats.flushes + 1} (${trigger})`);
    // Every output the new state hides gets indexed (huge ones spilled beside the session)
    // before any stub or chain line can point at it: summarized batches, aliased duplicates,
    // and calls listed inside compressed chains.
    const sessionFile = ctx.sessionManager.getSessionFile();
    const recorded = recordOriginals(recall, {
      calls: [...capture.batches.flatMap((b) => b.calls), ...prunedCallsOf(branchMessages, plan.nextState)],
      spill: sessionFile ? { thresholdBytes: settings.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } : undefined,
    });
    await writeSpills(recorded.spills, writeSpillFile);
    commit(recorded.index, plan);
    const usage = ctx.getContextUsage();
    if (usage?.tokens != null) tokensAtLastFlush = usage.tokens;
    const done: FlushReport = {
      trigger,
      batches: capture.batches.length,
      decisions: plan.decisions,
      persistedEntries: plan.entriesToPersist.length,
      durationMs: now() - started,
    };
    report = done;
    deps.status(ctx, contextStatus(branchMessages, keeperRender({ messages: branchMessages, state, settings, model })));
    return done;
  }

  function startFlush(trigger: FlushTrigger, ctx: ExtensionContext, closingMessage?: ContextMessage): Promise<FlushReport | undefined> {
    if (!active(ctx)) return Promise.resolve(undefined);
    if (inFlight) {
      queued = { trigger, ctx, closingMessage };
      return inFlight;
    }
    const run = runFlush(trigger, ctx, closingMessage)
      .catch((error: unknown) => {
        deps.notify(ctx, `context-keeper: flush failed (${error instanceof Error ? error.message : String(error)}); history left as it was`, "warning");
        return undefined;
      })
      .finally(() => {
        inFlight = undefined;
        const next = queued;
        queued = undefined;
        if (next) void startFlush(next.trigger, next.ctx, next.closingMessage);
      });
    inFlight = run;
    return run;
  }

  return {
    restore(ctx) {
      const branch = ctx.sessionManager.getBranch() as unknown[];
      const restored = restoreState(branch);
      const restoredRecall = restoreRecallIndex(branch);
      recall = restoredRecall.index;
      diagnostics = [...restored.diagnostics, ...restoredRecall.diagnostics];
      state = dropStateOutsideContext(restored.state, liveOccurrenceKeys(contextMessagesOf(ctx)));
      tokensAtLastFlush = ctx.getContextUsage()?.tokens ?? 0;
      if (diagnostics.length) deps.notify(ctx, `context-keeper: skipped ${diagnostics.length} unreadable state entr${diagnostics.length === 1 ? "y" : "ies"}: ${diagnostics[0]}`, "warning");
    },
    afterCompaction(ctx) {
      state = dropStateOutsideContext(state, liveOccurrenceKeys(contextMessagesOf(ctx)));
      tokensAtLastFlush = 0;
    },
    render(event, ctx) {
      if (!deps.settings().enabled) return undefined;
      coldReplan(ctx);
      const out = keeperRender({ messages: event.messages as ContextMessage[], state, settings: deps.settings(), model: modelIdentity(ctx) });
      return out === event.messages ? undefined : { messages: out };
    },
    onAssistantMessageEnd(message, ctx) {
      const m = message as { role?: string; stopReason?: string; content?: Array<{ type: string }> };
      if (m.role !== "assistant" || m.stopReason !== "stop") return;
      if ((m.content ?? []).some((b) => b.type === "toolCall")) return;
      void startFlush("request-end", ctx, message);
    },
    onTurnEnd(ctx) {
      const usage = ctx.getContextUsage();
      if (usage?.tokens == null || !usage.contextWindow) return;
      if (budgetTriggerFires({ settings: deps.settings(), contextTokens: usage.tokens, tokensAtLastFlush, contextWindow: usage.contextWindow })) {
        void startFlush("budget", ctx);
      }
    },
    async flushNow(ctx) {
      if (inFlight) await inFlight;
      return startFlush("manual", ctx);
    },
    async shutdown() {
      abort?.abort();
      if (inFlight) await inFlight;
    },
    state: () => state,
    recallIndex: () => recall,
    lastReport: () => report,
    diagnostics: () => diagnostics,
    busy: () => inFlight !== undefined,
  };
}
