/**
 * The pure part of the public adapter API (`pi-context-keeper/core`, whose entry is the
 * package's `core.ts`): the adapter shapes, config, persistence markers, preparation and
 * validation. `registerAsyncCompaction` — an adapter's background lifecycle, validation,
 * apply paths and status line bound to Pi — is the entry's own (it calls the host).
 */
export type { AnyAsyncCompactionAdapter, AsyncCompactionAdapter, PrepareInput, RunOptions, SnapshotContext, SnapshotFields } from "./adapter.ts";
export { type AsyncCompactionConfig, isInStartWindow, readCompactionEnv, startWindowBounds } from "./config.ts";
export { type BudgetFlushHold, budgetFlushHold, type CompactionOutlook } from "./cooperation.ts";
export { modelKeyOf, settingsKeyOf } from "./apply-gate.ts";
export { createDefaultAdapter, DEFAULT_PROMPT_VERSION, type DefaultAdapterOptions, type PiCompactFn } from "./default-adapter.ts";
export { INVALIDATION_REASONS, type InvalidationReason, type JobSnapshot, type JobState, type ReadyCompaction } from "./job-reducer.ts";
export type { ApplyOutcome, ApplyPath, LifecycleEvent, LifecycleListener } from "./lifecycle.ts";
export { ANCHOR_MARKER_KEY, COMPACTION_MARKER_KEY, type CompactionMarker, READY_ENTRY_TYPE, readCompactionMarker } from "./persistence.ts";
export { prepareCompaction } from "./prepare.ts";
export type { PiCompactionPrimitives } from "./primitives.ts";
export type { AsyncCompactionHandle, AsyncCompactionHandle as CompactionController, RegisterAsyncCompactionOptions, SettleRetry, Timers } from "./register-options.ts";
export { type AnchorAsyncCompactionAdapter, type AnchorSnapshot, fromAnchorAdapter, isAnchorAdapter } from "./anchor-compat.ts";
export { validateReadyJob, type ValidationInput, type ValidationResult } from "./validate.ts";
