/**
 * The adapter boundary: what a compaction package supplies so the core can run its work in
 * the background and hand the result to Pi. Core owns state, timeout, status, validation,
 * apply and handoff; the adapter owns preparation, generation and the result's details.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { JobSnapshot, ReadyCompaction } from "./job-reducer.ts";
import type { RunSpendMeter } from "./run-spend.ts";
import type { CompactionSettings, SessionEntry } from "./primitives.ts";

export interface PrepareInput {
  /** The active branch as Pi stores it (`ctx.sessionManager.getBranch()`), root first. */
  branch: SessionEntry[];
  /** Pi's resolved compaction settings for the active model. */
  settings: CompactionSettings;
  ctx: ExtensionContext;
}

/** What core knows when a job starts; the adapter adds its cut and prompt version. */
export interface SnapshotContext {
  sessionId: string;
  snapshotLeafId: string;
  modelKey: string;
  thinkingLevel: string;
  settingsKey: string;
}

export type SnapshotFields = Pick<
  JobSnapshot,
  "sessionId" | "snapshotLeafId" | "firstKeptEntryId" | "modelKey" | "thinkingLevel" | "settingsKey" | "promptVersion"
>;

export interface RunOptions {
  signal: AbortSignal;
  ctx: ExtensionContext;
  model: Model<Api>;
  thinkingLevel: string;
  /**
   * Counts the run's summary calls (`run-spend.ts`): an adapter that makes its calls through
   * `meter.wrap(streamFn)` has every one counted, also one stopped or never applied. Without
   * it, a run's spend is the usage on its result, and a run that fails or is aborted counts nothing.
   */
  meter?: RunSpendMeter;
}

export interface AsyncCompactionAdapter<TPrepared, TResult> {
  /** Stable id; scopes the status line key and the persisted marker. */
  id: string;
  /** Shown in the status line: `<label>: preparing` / `<label>: ready`. */
  label: string;
  /** Snapshot the compaction input; undefined when there is nothing to compact. */
  prepare(input: PrepareInput): TPrepared | undefined;
  createSnapshot(prepared: TPrepared, context: SnapshotContext): SnapshotFields;
  /** The expensive part, run in the background. Must honour `signal`. */
  run(prepared: TPrepared, options: RunOptions): Promise<TResult>;
  /** Convert to Pi's `CompactionResult` shape. */
  toCompaction(result: TResult, prepared: TPrepared): ReadyCompaction;
}

/** Any adapter, for code that only moves adapters around. */
// biome-ignore lint: the type parameters are intentionally erased here.
export type AnyAsyncCompactionAdapter = AsyncCompactionAdapter<any, any>;
