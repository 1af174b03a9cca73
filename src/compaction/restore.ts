/**
 * Reading a persisted ready summary back after a restart. It is revalidated before it may
 * become ready: a failing one goes straight to stale with its reason (the status line never
 * shows it as ready); a valid one is ready again and the caller applies it when Pi is idle.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CompactionController } from "./controller.ts";
import type { InvalidationReason, JobState } from "./job-reducer.ts";
import type { LifecycleListener } from "./lifecycle.ts";
import { findStoredReady } from "./persistence.ts";
import type { SessionEntry } from "./primitives.ts";
import type { ValidationResult } from "./validate.ts";

export type ReadyJobState = Extract<JobState, { kind: "ready" }>;

export interface RestoreOptions {
  controller: CompactionController;
  adapterId: string;
  /** The eleven apply checks against the live context and `branch`. */
  validate(ctx: ExtensionContext, ready: ReadyJobState, branch: SessionEntry[]): ValidationResult;
  emit: LifecycleListener;
  /** Apply the restored job as soon as Pi is idle (the bounded settle retry). */
  applyWhenIdle(ctx: ExtensionContext, jobId: string): void;
}

export function restoreStoredReady(ctx: ExtensionContext, options: RestoreOptions): void {
  const { controller: c, emit } = options;
  const branch = ctx.sessionManager.getBranch();
  const stored = findStoredReady(branch, options.adapterId);
  if (!stored || stored.appliedSince) return;
  const { snapshot, result } = stored.data;
  const candidate: ReadyJobState = { kind: "ready", job: snapshot, result, persisted: true };
  // A compaction after the stored entry changed the context the summary was made for.
  const verdict: { ok: true } | { ok: false; reason: InvalidationReason } = stored.compactedSince
    ? { ok: false, reason: "sync_fallback" }
    : options.validate(ctx, candidate, branch);
  if (!verdict.ok) {
    if (c.dispatch({ type: "restored", job: snapshot, result, staleReason: verdict.reason })) {
      emit({ kind: "apply", jobId: snapshot.jobId, path: "restore", outcome: "rejected", reason: verdict.reason });
    }
    return;
  }
  if (!c.dispatch({ type: "restored", job: snapshot, result })) return;
  emit({ kind: "apply", jobId: snapshot.jobId, path: "restore", outcome: "deferred" });
  options.applyWhenIdle(ctx, snapshot.jobId);
}
