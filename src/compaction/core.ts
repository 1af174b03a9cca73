/**
 * Public adapter API (`pi-context-keeper/core`): other compaction packages register an
 * adapter and get the background lifecycle, validation, apply paths and status line.
 * Everything here is type-safe to import without loading Pi's runtime; pass Pi's helpers
 * in `options.primitives` (see `src/host/compaction-runtime.ts` for the binding this package uses).
 */
export type { AnyAsyncCompactionAdapter, AsyncCompactionAdapter, PrepareInput, RunOptions, SnapshotContext, SnapshotFields } from "./adapter.ts";
export { type AsyncCompactionConfig, isInStartWindow, readCompactionEnv, startWindowBounds } from "./config.ts";
export { CompactionController, modelKeyOf, settingsKeyOf, type Timers } from "./controller.ts";
export { createDefaultAdapter, DEFAULT_PROMPT_VERSION, type DefaultAdapterOptions, type PiCompactFn } from "./default-adapter.ts";
export { INVALIDATION_REASONS, type InvalidationReason, type JobSnapshot, type JobState, type ReadyCompaction } from "./job-reducer.ts";
export type { ApplyOutcome, ApplyPath, LifecycleEvent, LifecycleListener } from "./lifecycle.ts";
export { COMPACTION_MARKER_KEY, READY_ENTRY_TYPE } from "./persistence.ts";
export { prepareCompaction } from "./prepare.ts";
export type { PiCompactionPrimitives } from "./primitives.ts";
export { registerAsyncCompaction, type RegisterAsyncCompactionOptions } from "./register-async.ts";
export { validateReadyJob, type ValidationInput, type ValidationResult } from "./validate.ts";
