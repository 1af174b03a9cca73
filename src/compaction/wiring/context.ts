/**
 * The shared context of one `registerAsyncCompaction` call: Pi, the adapter, the resolved
 * options, the controller, and the few mutable bits the hooks coordinate through.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "../adapter.ts";
import { EMPTY_PACE, maxTurnGrowth, type Pace } from "../adaptive-start.ts";
import { budgetFollowsOutput, type RoomInput } from "../threshold-decision.ts";
import { type AsyncCompactionConfig, DEFAULT_STALL_MS, DEFAULT_START_RATIO, DEFAULT_TIMEOUT_MS, DEFAULT_WAIT_MS } from "../config.ts";
import { CompactionController, type Timers } from "../controller.ts";
import type { JobSnapshot, ReadyCompaction } from "../job-reducer.ts";
import type { LateHandoff } from "../late-digest.ts";
import type { LifecycleListener } from "../lifecycle.ts";
import type { CompactionSettings, PiCompactionPrimitives, AgentMessage } from "../primitives.ts";
import type { ReadyJobState } from "../restore.ts";

export interface RegisterAsyncCompactionOptions {
  primitives: PiCompactionPrimitives;
  getCompactionSettings(ctx: ExtensionContext): CompactionSettings;
  config?: AsyncCompactionConfig;
  onLifecycleEvent?: LifecycleListener;
  /** Register `/<name>`; false to skip. Default `async-compact-now`. */
  commandName?: string | false;
  /** Persist ready summaries as custom entries (default true). */
  persistReady?: boolean;
  settleRetry?: SettleRetry;
  timers?: Timers;
  now?: () => number;
  newJobId?: () => string;
  /**
   * Consulted by every hook, the command and the ready callback (default: always true).
   * False makes them no-ops: no job starts, nothing is handed to Pi, no status line. A job
   * left over from an active period is cancelled.
   */
  isActive?: (ctx: ExtensionContext) => boolean;
  /**
   * The messages as they will be sent (another extension's render, e.g. the keeper's pruning),
   * so the "does the compacted context fit" check measures what the provider will see rather than
   * the raw branch. Default: the messages as they are.
   */
  sentContext?: (messages: AgentMessage[], ctx: ExtensionContext) => AgentMessage[];
}

export interface SettleRetry {
  intervalMs: number;
  attempts: number;
}

/** Per-registration mutable bits shared between hooks. */
export interface RegistrationState {
  /** Job whose `ctx.compact()` request is in flight (guards against asking twice). */
  compactRequestedFor?: string;
  /** Job applied by abort-and-compact: send "continue" once it lands. */
  autoResumeJobId?: string;
  /** Job for which abort-and-compact was already tried (at most once per job). */
  abortTriedFor?: string;
  /** Pending idle-settle timer. */
  settleHandle?: unknown;
  /** Job that `session_before_compact` is waiting for (its ready callback must not act). */
  awaitingFor?: string;
  /** Context growth per turn and summary latencies (adaptive start, room margin). */
  pace: Pace;
}

export interface RegistrationContext {
  pi: ExtensionAPI;
  adapter: AnyAsyncCompactionAdapter;
  options: RegisterAsyncCompactionOptions;
  config: AsyncCompactionConfig;
  timers: Timers;
  settle: SettleRetry;
  controller: CompactionController;
  state: RegistrationState;
  emit: LifecycleListener;
  isActive: (ctx: ExtensionContext) => boolean;
  now: () => number;
  /** Longest wait for a pending job in `session_before_compact` (ms; 0 = never wait). */
  waitMs: number;
  /** Stall budget before a late job is replaced by a digest (ms; negative = never). */
  stallMs: number;
}

export interface CreateRegistrationContextInput {
  pi: ExtensionAPI;
  adapter: AnyAsyncCompactionAdapter;
  options: RegisterAsyncCompactionOptions;
  /** Called when a job becomes ready (after the context exists). */
  onJobReady(rc: RegistrationContext, jobId: string): void;
  /** Called when a late job's summary comes (a digest was applied in its place). */
  onLateResult(rc: RegistrationContext, jobId: string, result: ReadyCompaction, late: LateHandoff): void;
}

export function createRegistrationContext(input: CreateRegistrationContextInput): RegistrationContext {
  const { pi, adapter, options } = input;
  const config = options.config ?? { enabled: true, startRatio: DEFAULT_START_RATIO, timeoutMs: DEFAULT_TIMEOUT_MS };
  const timers = options.timers ?? { setTimeout: (f: () => void, ms: number) => setTimeout(f, ms), clearTimeout: (h: unknown) => clearTimeout(h as never) };
  const settle = options.settleRetry ?? { intervalMs: 25, attempts: 40 };
  const controller = new CompactionController({
    adapter,
    config,
    getCompactionSettings: options.getCompactionSettings,
    fallbackThinkingLevel: () => pi.getThinkingLevel(),
    onLifecycleEvent: options.onLifecycleEvent,
    // Fires only once a job finishes, long after `rc` below is initialised.
    onReady: (jobId) => input.onJobReady(rc, jobId),
    onLateResult: (jobId, result, late) => input.onLateResult(rc, jobId, result, late),
    timers,
    now: options.now,
    newJobId: options.newJobId,
  });
  const rc: RegistrationContext = {
    pi,
    adapter,
    options,
    config,
    timers,
    settle,
    controller,
    state: { pace: EMPTY_PACE },
    emit: (e) => controller.emit(e),
    isActive: options.isActive ?? (() => true),
    now: options.now ?? Date.now,
    waitMs: config.waitMs ?? DEFAULT_WAIT_MS,
    stallMs: config.stallMs ?? DEFAULT_STALL_MS,
  };
  return rc;
}

/** The ready job, if the controller holds one. */
export function readyJob(rc: RegistrationContext): ReadyJobState | undefined {
  const current = rc.controller.current;
  return current.kind === "ready" ? (current as ReadyJobState) : undefined;
}

/** The job being prepared or ready, if any. */
export function activeJob(rc: RegistrationContext): JobSnapshot | undefined {
  const current = rc.controller.current;
  return current.kind === "pending" || current.kind === "ready" ? current.job : undefined;
}

/** What `hasRoom` needs about the live model, with `tokens` the current context size. */
export function roomFacts(rc: RegistrationContext, ctx: ExtensionContext, tokens: number | null | undefined): RoomInput {
  const model = ctx.model;
  return {
    tokens,
    contextWindow: ctx.getContextUsage()?.contextWindow ?? model?.contextWindow ?? 0,
    maxTurnGrowth: maxTurnGrowth(rc.state.pace),
    maxOutputTokens: model?.maxTokens ?? 0,
    budgetFollowsOutput: budgetFollowsOutput(model, thinkingOf(rc, ctx)),
  };
}

/** The live thinking level, falling back to Pi's global one. */
export function thinkingOf(rc: RegistrationContext, ctx: ExtensionContext) {
  return ctx.thinkingLevel ?? rc.pi.getThinkingLevel();
}
