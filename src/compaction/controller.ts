/**
 * The one in-memory job and its effects: starting, the background run, the timeout, the
 * status line and lifecycle events. Every state change goes through `jobReducer`; async
 * continuations carry their job id and are ignored by the reducer when they lost a race.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "./adapter.ts";
import type { AsyncCompactionConfig } from "./config.ts";
import type { CompactionOutlook } from "./cooperation.ts";
import {
  canStart,
  INITIAL_JOB_STATE,
  type InvalidationReason,
  type JobEvent,
  type JobSnapshot,
  type JobState,
  jobReducer,
  type ReadyCompaction,
} from "./job-reducer.ts";
import type { LateHandoff } from "./late-digest.ts";
import type { LifecycleEvent, LifecycleListener } from "./lifecycle.ts";
import type { CompactionSettings } from "./primitives.ts";

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface ControllerOptions {
  adapter: AnyAsyncCompactionAdapter;
  config: AsyncCompactionConfig;
  getCompactionSettings(ctx: ExtensionContext): CompactionSettings;
  /** Thinking level when `ctx.thinkingLevel` is absent (e.g. `pi.getThinkingLevel`). */
  fallbackThinkingLevel(): string;
  onLifecycleEvent?: LifecycleListener;
  /** Called once when a job becomes ready (core decides whether to apply or persist). */
  onReady?(jobId: string): void;
  /** Called once when a late job's summary comes (a digest was applied in its place). */
  onLateResult?(jobId: string, result: ReadyCompaction, late: LateHandoff): void;
  timers?: Timers;
  now?: () => number;
  newJobId?: () => string;
}

export function modelKeyOf(model: { provider: string; id: string } | undefined): string {
  return model ? `${model.provider}/${model.id}` : "";
}

export function settingsKeyOf(settings: Pick<CompactionSettings, "reserveTokens" | "keepRecentTokens">): string {
  return `reserve=${settings.reserveTokens};keep=${settings.keepRecentTokens}`;
}

interface LateRun {
  late: LateHandoff;
  abort: AbortController | undefined;
  timer: unknown;
}

export type StartOutcome =
  | { started: true; jobId: string }
  | { started: false; reason: "disabled" | "no_model" | "nothing_to_compact" | "busy" };

export class CompactionController {
  private state: JobState = INITIAL_JOB_STATE;
  private abort: AbortController | undefined;
  private timer: unknown;
  private ctx: ExtensionContext | undefined;
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly newJobId: () => string;
  private counter = 0;
  /** The status text last sent to the UI; unchanged text is not sent again. */
  private shownStatus: string | undefined;
  /** Jobs handed to Pi so far (for `outlook()`). */
  private handoffs = 0;
  /** Where a job starts at a turn end, as the last `turn_end` computed it (for `outlook()`). */
  private startWindow: CompactionOutlook["startWindow"];
  /** Runs that go on after a late handoff (their digest applied), by job id. */
  private lateRuns = new Map<string, LateRun>();
  /** `waitUntilSettled` callers, woken when their job leaves `pending`. */
  private settleWaiters = new Set<{ jobId: string; wake: () => void }>();

  constructor(private readonly options: ControllerOptions) {
    this.timers = options.timers ?? realTimers;
    this.now = options.now ?? Date.now;
    this.newJobId = options.newJobId ?? (() => `acj-${this.now().toString(36)}-${++this.counter}`);
  }

  get current(): JobState {
    return this.state;
  }

  /** Plain facts for the pruning side (`cooperation.ts`). A job already handed off counts as none. */
  outlook(): CompactionOutlook {
    const s = this.state;
    const job = s.kind === "pending" ? "pending" : s.kind === "ready" && !s.handoff ? "ready" : "none";
    return { job, handoffs: this.handoffs, ...(this.startWindow ? { startWindow: this.startWindow } : {}) };
  }

  /** The start window of the last turn end; undefined when no job would start there. */
  noteStartWindow(window: CompactionOutlook["startWindow"]): void {
    this.startWindow = window;
  }

  get adapter(): AnyAsyncCompactionAdapter {
    return this.options.adapter;
  }

  /** The most recent context seen by a hook; used for status updates from background work. */
  remember(ctx: ExtensionContext | undefined): void {
    this.ctx = ctx;
    this.renderStatus();
  }

  get lastCtx(): ExtensionContext | undefined {
    return this.ctx;
  }

  emit(event: LifecycleEvent): void {
    try {
      this.options.onLifecycleEvent?.(event);
    } catch {
      // A listener must never break compaction.
    }
  }

  /** Apply one event; returns true when the state changed. */
  dispatch(event: JobEvent): boolean {
    const before = this.state;
    const after = jobReducer(before, event);
    const jobId = "jobId" in event ? event.jobId : event.job.jobId;
    if (after === before) {
      this.emit({ kind: "ignored", jobId, cause: event.type });
      return false;
    }
    this.state = after;
    if (event.type === "handed_off") this.handoffs++;
    if (before.kind === "pending" && after.kind !== "pending") this.stopRun(after.kind !== "ready");
    for (const w of this.settleWaiters) if (!(after.kind === "pending" && after.job.jobId === w.jobId)) w.wake();
    if (event.type === "superseded" && before.kind === "ready") this.stopRun(true);
    const reason = after.kind === "stale" ? after.reason : event.type === "superseded" ? ("superseded" as const) : undefined;
    this.emit({
      kind: "transition",
      jobId: after.kind === "idle" ? jobId : after.job.jobId,
      from: before.kind,
      to: after.kind,
      cause: event.type,
      ...(reason ? { reason } : {}),
      ...(after.kind === "failed" ? { error: after.error } : {}),
    });
    this.renderStatus();
    return true;
  }

  /**
   * Resolve once job `jobId` is no longer pending (ready, stale, failed, replaced), after
   * `maxWaitMs`, or when `signal` aborts, whichever comes first.
   */
  waitUntilSettled(jobId: string, maxWaitMs: number, signal?: AbortSignal): Promise<"settled" | "timeout" | "aborted"> {
    const s = this.state;
    if (!(s.kind === "pending" && s.job.jobId === jobId)) return Promise.resolve("settled");
    if (signal?.aborted) return Promise.resolve("aborted");
    return new Promise((resolve) => {
      let handle: unknown;
      const finish = (how: "settled" | "timeout" | "aborted") => {
        if (!this.settleWaiters.delete(waiter)) return;
        this.timers.clearTimeout(handle);
        signal?.removeEventListener("abort", onAbort);
        resolve(how);
      };
      const waiter = { jobId, wake: () => finish("settled") };
      const onAbort = () => finish("aborted");
      this.settleWaiters.add(waiter);
      handle = this.timers.setTimeout(() => finish("timeout"), maxWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Stale the current pending/ready job (no-op otherwise). */
  invalidate(reason: InvalidationReason): boolean {
    const s = this.state;
    if (s.kind !== "pending" && s.kind !== "ready") return false;
    return this.dispatch({ type: "invalidate", jobId: s.job.jobId, reason });
  }

  /**
   * Start a background job from the current branch. With `supersede`, a ready or stale job
   * is replaced (`superseded`, with `cause`) instead of blocking the start.
   */
  start(ctx: ExtensionContext, opts: { manual: boolean; supersede?: InvalidationReason }): StartOutcome {
    if (!this.options.config.enabled) return { started: false, reason: "disabled" };
    const model = ctx.model;
    if (!model) return { started: false, reason: "no_model" };
    const previous = this.state;
    const replacing = opts.supersede !== undefined && (previous.kind === "ready" || previous.kind === "stale");
    if (!replacing && !canStart(previous)) return { started: false, reason: "busy" };

    const settings = this.options.getCompactionSettings(ctx);
    const branch = ctx.sessionManager.getBranch();
    const leaf = branch[branch.length - 1];
    const prepared = leaf ? this.options.adapter.prepare({ branch, settings, ctx }) : undefined;
    if (!leaf || prepared === undefined) return { started: false, reason: "nothing_to_compact" };

    const thinkingLevel = ctx.thinkingLevel ?? this.options.fallbackThinkingLevel();
    const fields = this.options.adapter.createSnapshot(prepared, {
      sessionId: ctx.sessionManager.getSessionId(),
      snapshotLeafId: leaf.id,
      modelKey: modelKeyOf(model),
      thinkingLevel,
      settingsKey: settingsKeyOf(settings),
    });
    const job: JobSnapshot = { ...fields, jobId: this.newJobId(), adapterId: this.options.adapter.id, manual: opts.manual, startedAt: this.now() };
    const changed = replacing
      ? this.dispatch({ type: "superseded", jobId: (previous as { job: JobSnapshot }).job.jobId, cause: opts.supersede!, next: job })
      : this.dispatch({ type: "start", job });
    if (!changed) return { started: false, reason: "busy" };

    const abort = new AbortController();
    this.abort = abort;
    if (this.options.config.timeoutMs > 0) {
      this.timer = this.timers.setTimeout(() => {
        this.dispatch({ type: "timeout", jobId: job.jobId });
      }, this.options.config.timeoutMs);
    }
    this.runInBackground(job.jobId, prepared, { signal: abort.signal, ctx, model, thinkingLevel });
    return { started: true, jobId: job.jobId };
  }

  private runInBackground(jobId: string, prepared: unknown, runOptions: Parameters<AnyAsyncCompactionAdapter["run"]>[1]): void {
    const adapter = this.options.adapter;
    Promise.resolve()
      .then(() => adapter.run(prepared, runOptions))
      .then((output) => {
        const result = adapter.toCompaction(output, prepared);
        if (!result || typeof result.summary !== "string" || result.summary.trim() === "") throw new Error("adapter returned an empty summary");
        const late = this.endLateRun(jobId);
        if (late) this.options.onLateResult?.(jobId, result, late);
        else if (this.dispatch({ type: "settled_ok", jobId, result })) this.options.onReady?.(jobId);
      })
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        if (this.endLateRun(jobId)) this.emit({ kind: "diagnostic", message: `late job ${jobId} failed: ${message}; its digest stays` });
        else this.dispatch({ type: "settled_error", jobId, error: message });
      });
  }

  /**
   * Pi compacts now with a digest in the pending job's place (`late-digest.ts`): the machine is
   * idle again (a new job may start), while the run goes on for the upgrade, with its own abort
   * and timeout. `gap`: the messages between the job's cut and the digest's.
   */
  handOffLate(jobId: string, cutEntryId: string, gap: unknown[]): boolean {
    const s = this.state;
    if (!(s.kind === "pending" && s.job.jobId === jobId)) return false;
    // The job's timer would time out a job the machine no longer holds: the run gets its own.
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    const run: LateRun = { late: { cutEntryId, gap }, abort: this.abort, timer: undefined };
    this.abort = undefined;
    this.timer = undefined;
    this.lateRuns.set(jobId, run);
    if (this.options.config.timeoutMs > 0) {
      run.timer = this.timers.setTimeout(() => {
        if (!this.endLateRun(jobId)) return;
        run.abort?.abort();
        this.emit({ kind: "diagnostic", message: `late job ${jobId} timed out; its digest stays` });
      }, this.options.config.timeoutMs);
    }
    return this.dispatch({ type: "late_handoff", jobId });
  }

  /** Pi wrote the late job's digest as `compactionEntryId` (the entry its summary will upgrade). */
  lateApplied(jobId: string, compactionEntryId: string): boolean {
    const run = this.lateRuns.get(jobId);
    if (!run || run.late.compactionEntryId !== undefined) return false;
    run.late = { ...run.late, compactionEntryId };
    return true;
  }

  /** Whether job `jobId` runs on after a late handoff. */
  isLate(jobId: string): boolean {
    return this.lateRuns.has(jobId);
  }

  /** Drop a late run's record (its timer cleared); returns what it knew, if it was one. */
  endLateRun(jobId: string, opts: { abort?: boolean } = {}): LateHandoff | undefined {
    const run = this.lateRuns.get(jobId);
    if (!run) return undefined;
    this.lateRuns.delete(jobId);
    if (run.timer !== undefined) this.timers.clearTimeout(run.timer);
    if (opts.abort) run.abort?.abort();
    return run.late;
  }

  /** Clear the timeout; abort the run when the job ended without a result. */
  private stopRun(abortRun: boolean): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (abortRun) this.abort?.abort();
    this.abort = undefined;
  }

  /** Session shutdown: cancel work, forget the context, clear the status line. */
  shutdown(): void {
    this.invalidate("cancelled");
    for (const jobId of [...this.lateRuns.keys()]) this.endLateRun(jobId, { abort: true });
    this.stopRun(true);
    this.setStatus(undefined);
    this.ctx = undefined;
  }

  statusKey(): string {
    return `async-compaction:${this.options.adapter.id}`;
  }

  private setStatus(text: string | undefined): void {
    if (text === this.shownStatus || !this.ctx) return;
    this.shownStatus = text;
    try {
      this.ctx.ui.setStatus(this.statusKey(), text);
    } catch {
      // UI may be gone during teardown.
    }
  }

  private renderStatus(): void {
    const label = this.options.adapter.label;
    const s = this.state;
    this.setStatus(s.kind === "pending" ? `${label}: preparing` : s.kind === "ready" ? `${label}: ready` : undefined);
  }
}
