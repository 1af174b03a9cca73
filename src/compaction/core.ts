/**
 * Public adapter API (`pi-context-keeper/core`): other compaction packages register an
 * adapter and get the background lifecycle, validation, apply paths and status line.
 * `registerAsyncCompaction` takes this package's adapter shape or pi-async-compaction's
 * (`anchor-compat.ts`); Pi's helpers and settings are the defaults (Pi is a peer dependency),
 * `options.primitives` / `getCompactionSettings` replace them.
 */
export type { AnyAsyncCompactionAdapter, AsyncCompactionAdapter, PrepareInput, RunOptions, SnapshotContext, SnapshotFields } from "./adapter.ts";
export { type AsyncCompactionConfig, isInStartWindow, readCompactionEnv, startWindowBounds } from "./config.ts";
export { type BudgetFlushHold, budgetFlushHold, type CompactionOutlook } from "./cooperation.ts";
export { CompactionController, modelKeyOf, settingsKeyOf, type Timers } from "./controller.ts";
export { createDefaultAdapter, DEFAULT_PROMPT_VERSION, type DefaultAdapterOptions, type PiCompactFn } from "./default-adapter.ts";
export { INVALIDATION_REASONS, type InvalidationReason, type JobSnapshot, type JobState, type ReadyCompaction } from "./job-reducer.ts";
export type { ApplyOutcome, ApplyPath, LifecycleEvent, LifecycleListener } from "./lifecycle.ts";
export { ANCHOR_MARKER_KEY, COMPACTION_MARKER_KEY, type CompactionMarker, READY_ENTRY_TYPE, readCompactionMarker } from "./persistence.ts";
export { prepareCompaction } from "./prepare.ts";
export type { PiCompactionPrimitives } from "./primitives.ts";
export type { RegisterAsyncCompactionOptions } from "./register-async.ts";
export { type CoreRegisterOptions, registerAsyncCompaction } from "../host/compaction-core.ts";
export { type AnchorAsyncCompactionAdapter, type AnchorSnapshot, fromAnchorAdapter, isAnchorAdapter } from "./anchor-compat.ts";
export { validateReadyJob, type ValidationInput, type ValidationResult } from "./validate.ts";
