/**
 * `registerAsyncCompaction`: binds one adapter's job lifecycle to Pi's hooks.
 *
 * Apply paths, in order of preference:
 *   1. `turn_end` returns a `compaction` draft: applied between turns, nothing aborted.
 *   2. idle: after `agent_end` (bounded settle retry) or when a job finishes while idle,
 *      `ctx.compact()` runs Pi's flow and `session_before_compact` hands the result over.
 *   3. any Pi compaction (threshold, overflow, `/compact`) is served from a ready job.
 *   4. abort-and-compact, once per job, only over the hard threshold mid-stream.
 */
import type { ExtensionAPI, ExtensionContext, TurnEndEventResult } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "./adapter.ts";
import { branchInfo, isSafeIdle, shouldAbortAndCompact, validateAgainstLive } from "./apply-gate.ts";
import { type AsyncCompactionConfig, DEFAULT_START_RATIO, DEFAULT_TIMEOUT_MS, isInStartWindow } from "./config.ts";
import { CompactionController, modelKeyOf, type Timers } from "./controller.ts";
import type { InvalidationReason } from "./job-reducer.ts";
import type { ApplyPath, LifecycleListener } from "./lifecycle.ts";
import { markedDetails, markerOf, READY_ENTRY_TYPE, readyEntryData } from "./persistence.ts";
import type { CompactionSettings, PiCompactionPrimitives, SessionEntry } from "./primitives.ts";
import { type ReadyJobState, restoreStoredReady } from "./restore.ts";
import { validateBranchAnchors } from "./validate.ts";

export interface RegisterAsyncCompactionOptions {
  primitives: PiCompactionPrimitives;
  getCompactionSettings(ctx: ExtensionContext): CompactionSettings;
  config?: AsyncCompactionConfig;
  onLifecycleEvent?: LifecycleListener;
  /** Register `/<name>`; false to skip. Default `async-compact-now`. */
  commandName?: string | false;
  /** Persist ready summaries as custom entries (default true). */
  persistReady?: boolean;
  settleRetry?: { intervalMs: number; attempts: number };
  timers?: Timers;
  now?: () => number;
  newJobId?: () => string;
  /**
   * Consulted by every hook, the command and the ready callback (default: always true).
   * False makes them no-ops: no job starts, nothing is handed to Pi, no status line. A job
   * left over from an active period is cancelled.
   */
  isActive?: (ctx: ExtensionContext) => boolean;
}

type Ready = ReadyJobState;

export function registerAsyncCompaction(
  pi: ExtensionAPI,
  adapter: AnyAsyncCompactionAdapter,
  options: RegisterAsyncCompactionOptions,
): CompactionController {
  const config = options.config ?? { enabled: true, startRatio: DEFAULT_START_RATIO, timeoutMs: DEFAULT_TIMEOUT_MS };
  const timers = options.timers ?? { setTimeout: (f: () => void, ms: number) => setTimeout(f, ms), clearTimeout: (h: unknown) => clearTimeout(h as never) };
  const settle = options.settleRetry ?? { intervalMs: 25, attempts: 40 };
  const emit: LifecycleListener = (e) => c.emit(e);
  let compactRequestedFor: string | undefined;
  let autoResumeJobId: string | undefined;
  let abortTriedFor: string | undefined;
  let settleHandle: unknown;

  const c = new CompactionController({
    adapter,
    config,
    getCompactionSettings: options.getCompactionSettings,
    fallbackThinkingLevel: () => pi.getThinkingLevel(),
    onLifecycleEvent: options.onLifecycleEvent,
    onReady: (jobId) => onJobReady(jobId),
    timers,
    now: options.now,
    newJobId: options.newJobId,
  });

  const isActive = options.isActive ?? (() => true);

  /** Whether the hook may act; when not, stand down (cancel a leftover job, clear its status). */
  function active(ctx: ExtensionContext): boolean {
    const on = activeFor(ctx);
    if (!on) standDown();
    return on;
  }

  /** The caller's answer; a throwing `isActive` counts as inactive. */
  function activeFor(ctx: ExtensionContext): boolean {
    try {
      return isActive(ctx);
    } catch {
      return false;
    }
  }

  function standDown(): void {
    if (settleHandle !== undefined) timers.clearTimeout(settleHandle);
    settleHandle = undefined;
    compactRequestedFor = undefined;
    autoResumeJobId = undefined;
    if (activeJob()) c.invalidate("cancelled");
  }

  const readyJob = (): Ready | undefined => (c.current.kind === "ready" ? (c.current as Ready) : undefined);
  const thinkingOf = (ctx: ExtensionContext) => ctx.thinkingLevel ?? pi.getThinkingLevel();

  function validate(ctx: ExtensionContext, ready: Ready, branch: SessionEntry[], settings: CompactionSettings, customInstructions?: string) {
    return validateAgainstLive({ ctx, snapshot: ready.job, result: ready.result, branch, settings, thinkingLevel: thinkingOf(ctx), customInstructions, primitives: options.primitives });
  }

  /** A `turn_end` draft is committed right after the handlers; confirm it at the next hook. */
  function confirmDraft(ctx: ExtensionContext): void {
    const ready = readyJob();
    if (!ready || ready.handoff !== "turn_end_draft") return;
    const jobId = ready.job.jobId;
    const persisted = ctx.sessionManager.getBranch().some((e) => e.type === "compaction" && markerOf(e.details)?.jobId === jobId);
    if (persisted) {
      c.dispatch({ type: "applied", jobId });
      emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "applied" });
    } else {
      const error = "turn_end compaction draft was not persisted";
      c.dispatch({ type: "apply_failed", jobId, error });
      emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "failed", error });
    }
  }

  function reject(jobId: string, path: ApplyPath, reason: InvalidationReason): void {
    emit({ kind: "apply", jobId, path, outcome: "rejected", reason });
    c.invalidate(reason);
  }

  function persistReady(): void {
    const ready = readyJob();
    if (!ready || ready.persisted || ready.handoff || options.persistReady === false) return;
    pi.appendEntry(READY_ENTRY_TYPE, readyEntryData(ready.job, ready.result));
    c.dispatch({ type: "persisted", jobId: ready.job.jobId });
  }

  function requestCompact(ctx: ExtensionContext, jobId: string, path: ApplyPath): void {
    if (compactRequestedFor === jobId) return;
    compactRequestedFor = jobId;
    emit({ kind: "apply", jobId, path, outcome: "requested" });
    ctx.compact({
      onError: (error) => {
        compactRequestedFor = undefined;
        const ready = readyJob();
        if (ready?.job.jobId === jobId && ready.handoff) {
          c.dispatch({ type: "apply_failed", jobId, error: error.message });
          emit({ kind: "apply", jobId, path, outcome: "failed", error: error.message });
        }
      },
    });
  }

  function onJobReady(jobId: string): void {
    const ctx = c.lastCtx;
    if (!ctx || !active(ctx)) return;
    if (isSafeIdle(ctx)) {
      persistReady();
      requestCompact(ctx, jobId, "idle_compact");
      return;
    }
    const usage = ctx.getContextUsage();
    const settings = options.getCompactionSettings(ctx);
    const abortNow = shouldAbortAndCompact({
      isIdle: ctx.isIdle(),
      hasPendingMessages: ctx.hasPendingMessages(),
      hasAbortSignal: ctx.signal !== undefined,
      tokens: usage?.tokens,
      contextWindow: usage?.contextWindow ?? 0,
      reserveTokens: settings.reserveTokens,
      alreadyTriedForJob: abortTriedFor === jobId,
    });
    if (abortNow) {
      abortTriedFor = jobId;
      autoResumeJobId = jobId;
      requestCompact(ctx, jobId, "abort_and_compact");
      return;
    }
    emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
  }

  function maybeStart(ctx: ExtensionContext, supersede?: InvalidationReason): void {
    if (!config.enabled) return;
    const usage = ctx.getContextUsage();
    if (!usage || usage.tokens === null) return emit({ kind: "skipped", reason: "no_usage" });
    const settings = options.getCompactionSettings(ctx);
    const inWindow = isInStartWindow({ tokens: usage.tokens, contextWindow: usage.contextWindow, startRatio: config.startRatio, reserveTokens: settings.reserveTokens });
    if (!inWindow) return emit({ kind: "skipped", reason: "not_in_window" });
    const outcome = c.start(ctx, { manual: false, supersede });
    if (!outcome.started) emit({ kind: "skipped", reason: outcome.reason });
  }

  function scheduleSettle(ctx: ExtensionContext, jobId: string, attempt: number): void {
    if (settleHandle !== undefined) timers.clearTimeout(settleHandle);
    settleHandle = timers.setTimeout(() => {
      settleHandle = undefined;
      const ready = readyJob();
      if (!ready || ready.job.jobId !== jobId || ready.handoff || !active(ctx)) return;
      if (ctx.hasPendingMessages()) return emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
      if (ctx.isIdle()) return requestCompact(ctx, jobId, "idle_compact");
      if (attempt + 1 < settle.attempts) scheduleSettle(ctx, jobId, attempt + 1);
      else emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
    }, attempt === 0 ? 0 : settle.intervalMs);
  }

  pi.on("turn_end", (event, ctx): TurnEndEventResult | undefined => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    confirmDraft(ctx);
    let supersede: InvalidationReason | undefined;
    const ready = readyJob();
    // Only a completed turn: an aborted or failed one may be followed by Pi's own recovery
    // (or by shutdown), and the job stays ready for agent_end / the next boundary.
    if (ready && !ready.handoff && event.outcome === "completed" && !event.entries.some((e) => e.type === "compaction")) {
      const verdict = validate(ctx, ready, ctx.sessionManager.getBranch(), options.getCompactionSettings(ctx));
      if (verdict.ok) {
        const jobId = ready.job.jobId;
        c.dispatch({ type: "handed_off", jobId, via: "turn_end_draft" });
        emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "handed_off" });
        const draft = { type: "compaction" as const, summary: ready.result.summary, firstKeptEntryId: ready.result.firstKeptEntryId, details: markedDetails(ready.job, ready.result.details), usage: ready.result.usage as never };
        return { entries: [...event.entries, draft] };
      }
      reject(ready.job.jobId, "turn_end_draft", verdict.reason);
      supersede = verdict.reason;
    }
    maybeStart(ctx, supersede);
    return undefined;
  });

  pi.on("agent_end", (_event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    confirmDraft(ctx);
    const ready = readyJob();
    if (!ready || ready.handoff) return;
    persistReady();
    scheduleSettle(ctx, ready.job.jobId, 0);
  });

  pi.on("session_before_compact", (event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    confirmDraft(ctx);
    const s = c.current;
    if (s.kind === "pending") {
      emit({ kind: "apply", jobId: s.job.jobId, path: "session_before_compact", outcome: "rejected", reason: "sync_fallback" });
      c.invalidate("sync_fallback");
      return undefined;
    }
    const ready = readyJob();
    if (!ready || ready.handoff) return undefined;
    const verdict = validate(ctx, ready, event.branchEntries, event.preparation.settings, event.customInstructions);
    if (!verdict.ok) {
      reject(ready.job.jobId, "session_before_compact", verdict.reason);
      return undefined;
    }
    c.dispatch({ type: "handed_off", jobId: ready.job.jobId, via: "session_before_compact" });
    emit({ kind: "apply", jobId: ready.job.jobId, path: "session_before_compact", outcome: "handed_off" });
    const { summary, firstKeptEntryId, usage, details } = ready.result;
    return {
      compaction: { summary, firstKeptEntryId, tokensBefore: event.preparation.tokensBefore, details: markedDetails(ready.job, details), usage: usage as never },
    };
  });

  pi.on("session_compact", (event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    compactRequestedFor = undefined;
    const marker = markerOf(event.compactionEntry.details);
    const ready = readyJob();
    if (ready?.handoff && event.fromExtension && marker?.jobId === ready.job.jobId) {
      const jobId = ready.job.jobId;
      c.dispatch({ type: "applied", jobId });
      emit({ kind: "apply", jobId, path: "session_before_compact", outcome: "applied" });
      if (autoResumeJobId === jobId) {
        autoResumeJobId = undefined;
        timers.setTimeout(() => pi.sendUserMessage("continue"), 0);
      }
      return;
    }
    // Someone else's compaction (Pi's own or another extension's): never claimed, and any
    // job of ours was computed against a context that no longer exists.
    c.invalidate("sync_fallback");
  });

  pi.on("session_compact_failed", (event, ctx) => {
    if (!active(ctx)) return;
    compactRequestedFor = undefined;
    autoResumeJobId = undefined;
    const ready = readyJob();
    if (!ready?.handoff || !event.fromExtension) return;
    const error = event.errorMessage ?? (event.aborted ? "compaction aborted" : "compaction failed");
    c.dispatch({ type: "apply_failed", jobId: ready.job.jobId, error });
    emit({ kind: "apply", jobId: ready.job.jobId, path: ready.handoff, outcome: "failed", error });
  });

  const activeJob = () => (c.current.kind === "pending" || c.current.kind === "ready" ? c.current.job : undefined);

  pi.on("model_select", (event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob();
    if (job && modelKeyOf(event.model) !== job.modelKey) c.invalidate("model_changed");
  });

  pi.on("thinking_level_select", (event, ctx) => {
    if (!active(ctx)) return;
    const job = activeJob();
    if (job && event.level !== job.thinkingLevel) c.invalidate("thinking_changed");
  });

  pi.on("session_tree", (_event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob();
    if (!job) return;
    const verdict = validateBranchAnchors(job, branchInfo(ctx.sessionManager.getBranch()));
    if (!verdict.ok) c.invalidate(verdict.reason);
  });

  pi.on("session_start", (_event, ctx) => {
    if (!active(ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob();
    if (job && job.sessionId !== ctx.sessionManager.getSessionId()) c.invalidate("session_changed");
    if (activeJob()) return;
    if (!config.enabled) return;
    restoreStoredReady(ctx, {
      controller: c,
      adapterId: adapter.id,
      validate: (vctx, ready, branch) => validate(vctx, ready, branch, options.getCompactionSettings(vctx)),
      emit,
      applyWhenIdle: (sctx, jobId) => scheduleSettle(sctx, jobId, 0),
    });
  });

  pi.on("session_shutdown", (_event, ctx) => {
    if (settleHandle !== undefined) timers.clearTimeout(settleHandle);
    settleHandle = undefined;
    // A ready summary that was never written survives the restart (revalidated at session_start).
    if (activeFor(ctx)) persistReady();
    c.shutdown();
  });

  if (options.commandName !== false) {
    pi.registerCommand(options.commandName ?? "async-compact-now", {
      description: "Start async compaction now (or apply a ready summary)",
      handler: async (_args, ctx) => {
        if (!active(ctx)) return ctx.ui.notify(`${adapter.label}: disabled`, "info");
        c.remember(ctx);
        confirmDraft(ctx);
        const s = c.current;
        if (s.kind === "pending") return ctx.ui.notify(`${adapter.label}: already preparing`, "info");
        const ready = readyJob();
        if (ready && !ready.handoff) {
          if (isSafeIdle(ctx)) return requestCompact(ctx, ready.job.jobId, "idle_compact");
          return ctx.ui.notify(`${adapter.label}: ready; applies at the next turn boundary`, "info");
        }
        const outcome = c.start(ctx, { manual: true });
        ctx.ui.notify(outcome.started ? `${adapter.label}: preparing` : `${adapter.label}: not started (${outcome.reason})`, "info");
      },
    });
  }

  return c;
}
