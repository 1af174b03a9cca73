/**
 * The options of `registerAsyncCompaction` (`./core`): what a registrant may set. Types only;
 * the host (`src/host/compaction-host.ts`) binds them to Pi.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "./adapter.ts";
import type { AsyncCompactionConfig } from "./config.ts";
import type { JobState } from "./job-reducer.ts";
import type { CompactionOutlook } from "./cooperation.ts";
import type { LifecycleListener } from "./lifecycle.ts";
import type { AgentMessage, CompactionSettings, PiCompactionPrimitives } from "./primitives.ts";

/** Timers the host delivers the engine's timer events with (tests pass hand-driven ones). */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SettleRetry {
  intervalMs: number;
  attempts: number;
}

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
   * The messages as they will be sent (another extension's render), so the "does the
   * compacted context fit" check measures what the provider will see rather than the raw
   * branch. Default: the messages as they are.
   */
  sentContext?: (messages: AgentMessage[], ctx: ExtensionContext) => AgentMessage[];
}

/** What a registration hands back: the adapter it runs, the job as it stands, and the pruning side's outlook. */
export interface AsyncCompactionHandle {
  readonly adapter: AnyAsyncCompactionAdapter;
  readonly current: JobState;
  outlook(): CompactionOutlook;
  /** Whether job `jobId` runs on after a late handoff (its digest applied in its place). */
  isLate(jobId: string): boolean;
}
