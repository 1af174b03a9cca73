/**
 * The one job and what changes it, inside a compaction step: every state change goes through
 * `jobReducer` (an event for a job the state no longer holds is ignored), and each transition
 * gives its effects — the lifecycle event, the run's timeout cleared, the run aborted when the
 * job ended without a result, a waiting `session_before_compact` woken. A step works on one
 * `StepContext` (its state and the effects so far, local to the step) and returns both.
 */
import { maxTurnGrowth } from "../../compaction/adaptive-start.ts";
import type { CompactionOutlook } from "../../compaction/cooperation.ts";
import { canStart, type InvalidationReason, type JobEvent, type JobSnapshot, jobReducer } from "../../compaction/job-reducer.ts";
import type { LateHandoff } from "../../compaction/late-digest.ts";
import type { LifecycleEvent } from "../../compaction/lifecycle.ts";
import type { RunSpend } from "../../compaction/run-spend.ts";
import { SPEND_ENTRY_TYPE, spendEntryData } from "../../compaction/spend-entry.ts";
import { budgetFollowsOutput, type RoomInput } from "../../compaction/threshold-decision.ts";
import type { EngineState } from "../session.ts";
import type { CompactionEffect, CompactionLive, CompactionSetup, CompactionState, ReadyJob, SentContext } from "./types.ts";

export const JOB_TIMER = "compaction:job-timeout";
export const SETTLE_TIMER = "compaction:settle";
export const lateTimer = (jobId: string) => `compaction:late-timeout:${jobId}`;

export interface StepContext {
  state: CompactionState;
  effects: CompactionEffect[];
  setup: CompactionSetup;
  /** The messages as the keeper will send them (validation's size check). */
  sent: SentContext;
  /** When the keeper's ledger last saw a request (or a warming refresh) go out; undefined without the keeper. */
  lastRequestAt?: number;
}

export function emit(cx: StepContext, event: LifecycleEvent): void {
  cx.effects.push({ kind: "lifecycle", event });
}

/** Clear the run's timeout; abort the run when the job ended without a result. */
function stopRun(cx: StepContext, abortRun: boolean): void {
  const running = cx.state.running;
  if (running === undefined) return;
  cx.effects.push({ kind: "timer-clear", key: JOB_TIMER });
  if (abortRun) cx.effects.push({ kind: "compaction-abort", jobId: running });
  cx.state = { ...cx.state, running: undefined };
}

/** Apply one job event; returns whether the state changed. */
export function dispatch(cx: StepContext, event: JobEvent): boolean {
  const before = cx.state.job;
  const after = jobReducer(before, event);
  const jobId = "jobId" in event ? event.jobId : event.job.jobId;
  if (after === before) {
    emit(cx, { kind: "ignored", jobId, cause: event.type });
    return false;
  }
  cx.state = { ...cx.state, job: after, handoffs: cx.state.handoffs + (event.type === "handed_off" ? 1 : 0) };
  if (before.kind === "pending" && after.kind !== "pending") stopRun(cx, after.kind !== "ready");
  const waiting = cx.state.awaitingFor;
  if (waiting !== undefined && !(after.kind === "pending" && after.job.jobId === waiting)) cx.effects.push({ kind: "compaction-wake", jobId: waiting });
  if (event.type === "superseded" && before.kind === "ready") stopRun(cx, true);
  const reason = after.kind === "stale" ? after.reason : event.type === "superseded" ? ("superseded" as const) : undefined;
  if (before.kind === "ready" && !(after.kind === "ready" && after.job.jobId === before.job.jobId)) leftReady(cx, before, event.type === "applied", reason ?? (after.kind === "failed" ? "failed" : event.type));
  emit(cx, {
    kind: "transition",
    jobId: after.kind === "idle" ? jobId : after.job.jobId,
    from: before.kind,
    to: after.kind,
    cause: event.type,
    ...(reason ? { reason } : {}),
    ...(after.kind === "failed" ? { error: after.error } : {}),
  });
  syncStatus(cx);
  return true;
}

/**
 * The ready job left ready: applied, its spend is on Pi's compaction entry (when the result
 * carries usage for Pi to record); any other way, its summary was never applied and its held
 * spend is recorded now.
 */
function leftReady(cx: StepContext, ready: ReadyJob, applied: boolean, reason: string): void {
  const jobId = ready.job.jobId;
  const held = cx.state.heldSpend[jobId];
  if (!held) return;
  const { [jobId]: _left, ...rest } = cx.state.heldSpend;
  cx.state = { ...cx.state, heldSpend: rest };
  if (applied && ready.result.usage !== undefined && ready.result.usage !== null) return;
  recordSpend(cx, jobId, applied ? "applied without usage" : reason, held);
}

/** Hold the ready job's spend until it is applied or leaves ready another way. */
export function holdSpend(cx: StepContext, jobId: string, spend: RunSpend | undefined): void {
  if (!spend) return;
  cx.state = { ...cx.state, heldSpend: { ...cx.state.heldSpend, [jobId]: spend } };
}

/** Record what a job's summary calls cost, its summary not applied: one spend entry (`spend-entry.ts`). */
export function recordSpend(cx: StepContext, jobId: string, reason: string, spend: RunSpend | undefined): void {
  if (!spend || spend.calls === 0) return;
  cx.effects.push({ kind: "append", entries: [{ customType: SPEND_ENTRY_TYPE, data: spendEntryData(jobId, reason, spend) }] });
}

/** Why job `jobId`, no longer the current job or never ready, ended without being applied. */
export function endedReason(cx: StepContext, jobId: string): string {
  const s = cx.state.job;
  if (s.kind === "stale" && s.job.jobId === jobId) return s.reason;
  if (s.kind === "failed" && s.job.jobId === jobId) return "failed";
  return "cancelled";
}

/** Stale the current pending/ready job (no-op otherwise). */
export function invalidate(cx: StepContext, reason: InvalidationReason): boolean {
  const s = cx.state.job;
  if (s.kind !== "pending" && s.kind !== "ready") return false;
  return dispatch(cx, { type: "invalidate", jobId: s.job.jobId, reason });
}

/** A prepared job starts (or replaces a ready or stale one: `supersede`); its run and timeout start with it. */
export function startJob(cx: StepContext, job: JobSnapshot, supersede: InvalidationReason | undefined): boolean {
  const previous = cx.state.job;
  const replacing = supersede !== undefined && (previous.kind === "ready" || previous.kind === "stale");
  const changed = replacing ? dispatch(cx, { type: "superseded", jobId: (previous as { job: JobSnapshot }).job.jobId, cause: supersede!, next: job }) : dispatch(cx, { type: "start", job });
  if (!changed) return false;
  cx.state = { ...cx.state, running: job.jobId };
  if (cx.setup.config.timeoutMs > 0) cx.effects.push({ kind: "timer-set", key: JOB_TIMER, ms: cx.setup.config.timeoutMs });
  cx.effects.push({ kind: "compaction-run", jobId: job.jobId });
  return true;
}

/** Whether a start may even be asked for (the adapter is not consulted when it cannot happen). */
export function startBlocked(cx: StepContext, live: CompactionLive, supersede: InvalidationReason | undefined): "disabled" | "no_model" | "busy" | undefined {
  if (!cx.setup.config.enabled) return "disabled";
  if (!live.model) return "no_model";
  const previous = cx.state.job;
  const replacing = supersede !== undefined && (previous.kind === "ready" || previous.kind === "stale");
  return replacing || canStart(previous) ? undefined : "busy";
}

/**
 * Pi compacts now with a digest in the pending job's place: the machine is idle again (a new
 * job may start), while the run goes on for the upgrade, with its own timeout.
 */
export function handOffLate(cx: StepContext, jobId: string, late: LateHandoff): boolean {
  const s = cx.state.job;
  if (!(s.kind === "pending" && s.job.jobId === jobId)) return false;
  // The job's timer would time out a job the machine no longer holds: the run gets its own.
  if (cx.state.running === jobId) cx.effects.push({ kind: "timer-clear", key: JOB_TIMER });
  cx.state = { ...cx.state, running: undefined, late: { ...cx.state.late, [jobId]: late } };
  if (cx.setup.config.timeoutMs > 0) cx.effects.push({ kind: "timer-set", key: lateTimer(jobId), ms: cx.setup.config.timeoutMs });
  return dispatch(cx, { type: "late_handoff", jobId });
}

/** Drop a late run's record (its timer cleared); returns what it knew, if it was one. */
export function endLateRun(cx: StepContext, jobId: string, opts: { abort?: boolean } = {}): LateHandoff | undefined {
  const late = cx.state.late[jobId];
  if (!late) return undefined;
  const { [jobId]: _ended, ...rest } = cx.state.late;
  cx.state = { ...cx.state, late: rest };
  cx.effects.push({ kind: "timer-clear", key: lateTimer(jobId) });
  if (opts.abort) cx.effects.push({ kind: "compaction-abort", jobId });
  return late;
}

export function readyJob(cx: StepContext): ReadyJob | undefined {
  const s = cx.state.job;
  return s.kind === "ready" ? s : undefined;
}

/** The job being prepared or ready, if any. */
export function activeJob(cx: StepContext): JobSnapshot | undefined {
  const s = cx.state.job;
  return s.kind === "pending" || s.kind === "ready" ? s.job : undefined;
}

export function clearSettle(cx: StepContext): void {
  if (cx.state.settle === undefined) return;
  cx.effects.push({ kind: "timer-clear", key: SETTLE_TIMER });
  cx.state = { ...cx.state, settle: undefined };
}

/**
 * Whether the hook may act; an inactive context stands the registration down first (a
 * leftover job cancelled, pending requests dropped, no start window held).
 */
export function enter(cx: StepContext, live: CompactionLive | undefined): live is CompactionLive {
  if (live?.active) return true;
  clearSettle(cx);
  cx.state = { ...cx.state, requestedFor: undefined, autoResumeFor: undefined };
  if (activeJob(cx)) invalidate(cx, "cancelled");
  // No job will start or apply: the pruning side must not hold its budget flush for one.
  cx.state = { ...cx.state, startWindow: undefined, applyFrom: undefined, growthPerTurn: undefined };
  return false;
}

/** What `hasRoom` needs about the live model, with `tokens` the current context size. */
export function roomFacts(cx: StepContext, live: CompactionLive, tokens: number | null | undefined): RoomInput {
  return {
    tokens,
    contextWindow: live.usage()?.contextWindow ?? live.model?.contextWindow ?? 0,
    maxTurnGrowth: maxTurnGrowth(cx.state.pace),
    maxOutputTokens: live.model?.maxTokens ?? 0,
    budgetFollowsOutput: budgetFollowsOutput(live.model, live.thinkingLevel),
  };
}

/** The status line for the current job: `<label>: preparing` / `<label>: ready`, or nothing. */
export function statusKey(setup: CompactionSetup): string {
  return `async-compaction:${setup.adapter.id}`;
}

/** The status effect when the job's text changed since it was last shown. */
export function syncStatus(cx: StepContext): void {
  const label = cx.setup.adapter.label;
  const s = cx.state.job;
  const text = s.kind === "pending" ? `${label}: preparing` : s.kind === "ready" ? `${label}: ready` : undefined;
  if (text === cx.state.status) return;
  cx.state = { ...cx.state, status: text };
  cx.effects.push({ kind: "status", key: statusKey(cx.setup), text });
}

/** A pure query for callers: async compaction's outlook from the engine's state. */
export function compactionOutlookOf(state: EngineState): CompactionOutlook {
  return outlookOf(state.compaction);
}

/** Plain facts for the pruning side (`cooperation.ts`). A job already handed off counts as none. */
export function outlookOf(state: CompactionState): CompactionOutlook {
  const s = state.job;
  const job = s.kind === "pending" ? "pending" : s.kind === "ready" && !s.handoff ? "ready" : "none";
  return {
    job,
    handoffs: state.handoffs,
    ...(state.startWindow ? { startWindow: state.startWindow } : {}),
    ...(state.applyFrom !== undefined ? { applyFrom: state.applyFrom } : {}),
    ...(state.applyFrom !== undefined && state.growthPerTurn !== undefined ? { growthPerTurn: state.growthPerTurn } : {}),
  };
}
