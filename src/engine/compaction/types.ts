/**
 * Async compaction's slice of the engine: its state, what the host tells it about the live
 * session (`CompactionLive`), the constants of one registration (`CompactionSetup`), its
 * events and its effects. Plain data, except `CompactionLive`'s readers (Pi's branch, settings
 * and usage are read only when a step needs them) and the setup's Pi helpers (pure
 * functions of the data handed to them).
 */
import type { AsyncCompactionConfig } from "../../compaction/config.ts";
import type { Pace } from "../../compaction/adaptive-start.ts";
import type { CompactionOutlook } from "../../compaction/cooperation.ts";
import type { InvalidationReason, JobSnapshot, JobState, ReadyCompaction } from "../../compaction/job-reducer.ts";
import type { LateHandoff } from "../../compaction/late-digest.ts";
import type { ApplyPath, LifecycleEvent } from "../../compaction/lifecycle.ts";
import type { AgentMessage, CompactionPreparation, CompactionSettings, PiCompactionPrimitives, SessionEntry } from "../../compaction/primitives.ts";
import type { KeeperSettings } from "../../settings/schema.ts";
import type { ModelIdentityInput } from "../config.ts";
import type { PersistEntry } from "../flush.ts";
import type { RunSpend } from "../../compaction/run-spend.ts";

export interface CompactionState {
  job: JobState;
  /** Jobs handed to Pi so far (the pruning side's outlook). */
  handoffs: number;
  /** Where a job starts at a turn end, as the last turn end worked it out (undefined: none would start). */
  startWindow: CompactionOutlook["startWindow"];
  /** Context size from which a ready summary applies, as the last turn end worked it out (`apply-need.ts`; undefined: no automatic compaction). */
  applyFrom: number | undefined;
  /** The context's average growth per turn lately (tokens), as the last turn end saw it. */
  growthPerTurn: number | undefined;
  /** The last turn or run end this part saw (when the cache was last used, without the keeper's ledger). */
  lastActivityAt: number | undefined;
  /** The ready job already reported as waiting for need (`apply-need.ts`). */
  waitingFor: string | undefined;
  /** Context growth per turn and summary latencies (adaptive start, room margin). */
  pace: Pace;
  /** The job whose background run (and its timeout) is live. */
  running: string | undefined;
  /** Job whose `ctx.compact()` request is in flight (guards against asking twice). */
  requestedFor: string | undefined;
  /** Job applied by abort-and-compact: send "continue" once it lands. */
  autoResumeFor: string | undefined;
  /** Job for which abort-and-compact was already tried (at most once per job). */
  abortTriedFor: string | undefined;
  /** Job `session_before_compact` is waiting for (its ready handling is left to that hook). */
  awaitingFor: string | undefined;
  /** The idle-settle poll armed (its timer is `SETTLE_TIMER`). */
  settle: { jobId: string; attempt: number } | undefined;
  /** Runs that go on after a late handoff (their digest applied), by job id. */
  late: Record<string, LateHandoff>;
  /** The status line's text as last shown. */
  status: string | undefined;
  /**
   * What the ready job's summary calls cost (`run-spend.ts`), by job id, held while it waits:
   * applied, Pi's compaction entry carries it; leaving ready any other way, it is recorded in a
   * spend entry (`spend-entry.ts`).
   */
  heldSpend: Record<string, RunSpend>;
}

export function initialCompactionState(): CompactionState {
  return {
    job: { kind: "idle" },
    handoffs: 0,
    startWindow: undefined,
    applyFrom: undefined,
    growthPerTurn: undefined,
    lastActivityAt: undefined,
    waitingFor: undefined,
    pace: { turns: [], latenciesMs: [] },
    running: undefined,
    requestedFor: undefined,
    autoResumeFor: undefined,
    abortTriedFor: undefined,
    awaitingFor: undefined,
    settle: undefined,
    late: {},
    status: undefined,
    heldSpend: {},
  };
}

/** The constants of one registration (one adapter). */
export interface CompactionSetup {
  adapter: { id: string; label: string };
  config: AsyncCompactionConfig;
  primitives: PiCompactionPrimitives;
  settle: { intervalMs: number; attempts: number };
  /** Persist ready summaries as custom entries. */
  persistReady: boolean;
  /** Longest wait for a pending job in `session_before_compact` (ms; 0 = never wait). */
  waitMs: number;
  /** Stall budget before a late job is replaced by a digest (ms; negative = never). */
  stallMs: number;
}

/** What the host reads of the live session for a compaction step. */
export interface CompactionLive {
  /** The subsystem acts for this context (the keeper's settings, or the registrant's `isActive`). */
  active: boolean;
  now: number;
  sessionId: string;
  /** `provider/id` of the session model ("" without one). */
  modelKey: string;
  model: { contextWindow?: number; maxTokens?: number; api?: string; reasoning?: boolean; compat?: unknown } | undefined;
  /** The live thinking level (Pi's global one when the context has none). */
  thinkingLevel: string;
  idle(): boolean;
  pendingMessages(): boolean;
  /** An abort signal is set (a stream is running). */
  streaming: boolean;
  branch(): SessionEntry[];
  /** Pi's compaction settings for the session model. */
  settings(): CompactionSettings;
  usage(): { tokens: number | null; contextWindow: number } | undefined;
  /** The session model's prompt-cache entry lifetime (ms; undefined: unknown): when a waiting summary may apply because the cache is cold. */
  cacheTtlMs?: number;
  /** The keeper runs beside compaction: the "compacted context fits" check measures the messages as its render sends them. */
  keeperRender?: { settings: KeeperSettings; model: ModelIdentityInput | undefined };
  /** Otherwise a registrant's own render of the messages as they will be sent (`./core`'s `sentContext`). */
  sentContext?: (messages: AgentMessage[]) => AgentMessage[];
}

interface Step {
  setup: CompactionSetup;
  live: CompactionLive;
}

/** Async compaction's events (a Pi event, a timer, or the outcome of an effect). */
export type CompactionEvent =
  | ({ type: "compaction-session-start" } & Step)
  /** `inFlight`: the runs not ended yet, with what their summary calls cost so far (`run-spend.ts`); none of them is heard of again. */
  | ({ type: "compaction-shutdown"; inFlight?: Record<string, RunSpend> } & Step)
  | ({ type: "compaction-turn-end"; outcome: string; entries: readonly { type: string }[] } & Step)
  | ({ type: "compaction-agent-end" } & Step)
  | ({ type: "compaction-model-select"; modelKey: string } & Step)
  | ({ type: "compaction-thinking-select"; level: string } & Step)
  | ({ type: "compaction-tree" } & Step)
  /** `session_before_compact`; `waited`: the wait it asked for ended (how, and after how long). */
  | ({ type: "compaction-before-compact"; preparation: CompactionPreparation; branchEntries: SessionEntry[]; customInstructions?: string; reason: string; waited?: { waitEnd: "settled" | "timeout" | "aborted"; waitedMs: number } } & Step)
  | ({ type: "compaction-compacted"; fromExtension: boolean; entry: { id: string; details: unknown; tokensBefore: number } } & Step)
  | ({ type: "compaction-compact-failed"; fromExtension: boolean; errorMessage?: string; aborted?: boolean } & Step)
  /** `/async-compact-now`. */
  | ({ type: "compaction-command" } & Step)
  /** The host prepared a job a `compaction-start` effect asked for (`job` absent: nothing to compact). */
  | ({ type: "compaction-started"; job: JobSnapshot | undefined; request: StartRequest } & Step)
  /**
   * A background run ended (a result in Pi's shape, or why not); `live` from the last context
   * seen, if any; `spend`: what its summary calls cost, when the run was metered (`run-spend.ts`).
   */
  | { type: "compaction-settled"; setup: CompactionSetup; live: CompactionLive | undefined; now: number; jobId: string; result?: ReadyCompaction; error?: string; spend?: RunSpend }
  /** A timer the engine set fired. */
  | ({ type: "compaction-timer"; key: string } & Step)
  /** `ctx.compact()` reported an error. */
  | { type: "compaction-request-failed"; setup: CompactionSetup; jobId: string; path: ApplyPath; error: string }
  /** The late job's upgrade entry was written (or not). */
  | { type: "compaction-upgrade-written"; setup: CompactionSetup; jobId: string; error?: string };

/** What a start effect asks for, and who asked (the answer differs). */
export interface StartRequest {
  manual: boolean;
  supersede?: InvalidationReason;
  origin: "turn_end" | "command";
}

/** What the host performs for async compaction, in order. */
export type CompactionEffect =
  /** Prepare a job from the current branch (the adapter's `prepare` and `createSnapshot`), then step `compaction-started`. */
  | { kind: "compaction-start"; request: StartRequest }
  /** Run job `jobId` in the background (the adapter's `run`), then step `compaction-settled`. */
  | { kind: "compaction-run"; jobId: string }
  | { kind: "compaction-abort"; jobId: string }
  /** Set (or reset) timer `key`; step `compaction-timer` when it fires. */
  | { kind: "timer-set"; key: string; ms: number }
  | { kind: "timer-clear"; key: string }
  /** `ctx.compact()`; on its error step `compaction-request-failed`. */
  | { kind: "compaction-request"; jobId: string; path: ApplyPath }
  /** Append these custom entries, in order (the ready summary; what an unapplied summary's calls cost). */
  | { kind: "append"; entries: readonly PersistEntry[] }
  /** Append the late job's upgrade entry, then step `compaction-upgrade-written`. */
  | { kind: "compaction-upgrade"; jobId: string; customType: string; data: unknown }
  /** Wake the `session_before_compact` waiting for job `jobId` (it left pending). */
  | { kind: "compaction-wake"; jobId: string }
  | { kind: "lifecycle"; event: LifecycleEvent }
  | { kind: "status"; key: string; text: string | undefined }
  /** `later`: on the next tick (Pi's interactive mode re-renders its chat right after `session_compact`). */
  | { kind: "say"; text: string; level: "info" | "warning" | "error"; later?: boolean }
  | { kind: "send-user-message"; text: string; later: boolean };

/** The messages as the keeper will send them (identity without the keeper). */
export type SentContext = ((messages: AgentMessage[]) => AgentMessage[]) | undefined;

export type ReadyJob = Extract<JobState, { kind: "ready" }>;
