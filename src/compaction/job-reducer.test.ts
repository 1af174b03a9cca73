import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  canStart,
  INITIAL_JOB_STATE,
  INVALIDATION_REASONS,
  type JobEvent,
  type JobSnapshot,
  type JobState,
  jobReducer,
  type ReadyCompaction,
} from "./job-reducer.ts";

function snap(jobId: string): JobSnapshot {
  return {
    jobId,
    sessionId: "s1",
    snapshotLeafId: "leaf",
    firstKeptEntryId: "fk",
    modelKey: "p/m",
    thinkingLevel: "off",
    settingsKey: "16384/20000",
    promptVersion: "pi-1",
    adapterId: "default",
    manual: false,
    startedAt: 0,
  };
}
const RESULT: ReadyCompaction = { summary: "S", firstKeptEntryId: "fk", tokensBefore: 10 };

const idle: JobState = INITIAL_JOB_STATE;
const pending: JobState = { kind: "pending", job: snap("j1") };
const ready: JobState = { kind: "ready", job: snap("j1"), result: RESULT, persisted: false };
const readyHanded: JobState = { ...ready, handoff: "session_before_compact" } as JobState;
const stale: JobState = { kind: "stale", job: snap("j1"), reason: "model_changed" };
const failed: JobState = { kind: "failed", job: snap("j1"), reason: "failed", error: "boom" };

type Row = [string, JobState, JobEvent, JobState | "same"];

const rows: Row[] = [
  ["idle + start -> pending", idle, { type: "start", job: snap("j2") }, { kind: "pending", job: snap("j2") }],
  ["stale + start -> pending", stale, { type: "start", job: snap("j2") }, { kind: "pending", job: snap("j2") }],
  ["failed + start -> pending", failed, { type: "start", job: snap("j2") }, { kind: "pending", job: snap("j2") }],
  ["pending + start is ignored (pending jobs are not replaced)", pending, { type: "start", job: snap("j2") }, "same"],
  ["ready + start is ignored (must supersede)", ready, { type: "start", job: snap("j2") }, "same"],
  ["pending + settled_ok -> ready", pending, { type: "settled_ok", jobId: "j1", result: RESULT }, { kind: "ready", job: snap("j1"), result: RESULT, persisted: false }],
  ["pending + settled_ok for another job is ignored", pending, { type: "settled_ok", jobId: "j0", result: RESULT }, "same"],
  ["stale + settled_ok (late promise) is ignored", stale, { type: "settled_ok", jobId: "j1", result: RESULT }, "same"],
  ["idle + settled_ok is ignored", idle, { type: "settled_ok", jobId: "j1", result: RESULT }, "same"],
  ["pending + settled_error -> failed", pending, { type: "settled_error", jobId: "j1", error: "x" }, { kind: "failed", job: snap("j1"), reason: "failed", error: "x" }],
  ["stale + settled_error (late) is ignored", stale, { type: "settled_error", jobId: "j1", error: "x" }, "same"],
  ["pending + timeout -> stale(timeout)", pending, { type: "timeout", jobId: "j1" }, { kind: "stale", job: snap("j1"), reason: "timeout" }],
  ["ready + timeout (lost race) is ignored", ready, { type: "timeout", jobId: "j1" }, "same"],
  ["pending + timeout for another job is ignored", pending, { type: "timeout", jobId: "j9" }, "same"],
  ["pending + invalidate -> stale", pending, { type: "invalidate", jobId: "j1", reason: "sync_fallback" }, { kind: "stale", job: snap("j1"), reason: "sync_fallback" }],
  ["ready + invalidate -> stale", ready, { type: "invalidate", jobId: "j1", reason: "model_changed" }, { kind: "stale", job: snap("j1"), reason: "model_changed" }],
  ["stale + invalidate is ignored (first reason wins)", stale, { type: "invalidate", jobId: "j1", reason: "cancelled" }, "same"],
  ["ready + invalidate for another job is ignored", ready, { type: "invalidate", jobId: "j2", reason: "cancelled" }, "same"],
  ["ready + superseded -> pending(next)", ready, { type: "superseded", jobId: "j1", cause: "too_large", next: snap("j2") }, { kind: "pending", job: snap("j2") }],
  ["stale + superseded -> pending(next)", stale, { type: "superseded", jobId: "j1", cause: "too_large", next: snap("j2") }, { kind: "pending", job: snap("j2") }],
  ["handed-off ready cannot be superseded", readyHanded, { type: "superseded", jobId: "j1", cause: "too_large", next: snap("j2") }, "same"],
  ["pending + superseded is ignored", pending, { type: "superseded", jobId: "j1", cause: "too_large", next: snap("j2") }, "same"],
  ["ready + persisted marks it", ready, { type: "persisted", jobId: "j1" }, { ...ready, persisted: true } as JobState],
  ["ready + handed_off records the path", ready, { type: "handed_off", jobId: "j1", via: "turn_end_draft" }, { ...ready, handoff: "turn_end_draft" } as JobState],
  ["second handed_off is ignored", readyHanded, { type: "handed_off", jobId: "j1", via: "turn_end_draft" }, "same"],
  ["ready + applied -> idle", readyHanded, { type: "applied", jobId: "j1" }, { kind: "idle", lastJobId: "j1" }],
  ["pending + applied is ignored", pending, { type: "applied", jobId: "j1" }, "same"],
  ["ready + applied for another job is ignored", ready, { type: "applied", jobId: "j7" }, "same"],
  ["ready + apply_failed -> failed", readyHanded, { type: "apply_failed", jobId: "j1", error: "disk" }, { kind: "failed", job: snap("j1"), reason: "failed", error: "disk" }],
  ["idle + restored -> ready(persisted)", idle, { type: "restored", job: snap("j3"), result: RESULT }, { kind: "ready", job: snap("j3"), result: RESULT, persisted: true }],
  ["idle + restored(staleReason) -> stale", idle, { type: "restored", job: snap("j3"), result: RESULT, staleReason: "thinking_changed" }, { kind: "stale", job: snap("j3"), reason: "thinking_changed" }],
  ["pending + restored is ignored", pending, { type: "restored", job: snap("j3"), result: RESULT }, "same"],
];

describe("jobReducer transitions", () => {
  for (const [name, before, event, after] of rows) {
    test(name, () => {
      const next = jobReducer(before, event);
      if (after === "same") expect(next).toBe(before);
      else {
        expect(next).toEqual(after);
        expect(next).not.toBe(before);
      }
    });
  }

  test("all sixteen invalidation reasons are named", () => {
    expect(new Set(INVALIDATION_REASONS).size).toBe(16);
    for (const reason of INVALIDATION_REASONS) {
      expect(jobReducer(pending, { type: "invalidate", jobId: "j1", reason })).toEqual({ kind: "stale", job: snap("j1"), reason });
    }
  });

  test("canStart only from idle, stale, failed", () => {
    expect([idle, pending, ready, stale, failed].map(canStart)).toEqual([true, false, false, true, true]);
  });
});

describe("a late job (a digest applied in its place)", () => {
  test("pending → idle: the machine is free for a new job (the run goes on in the controller)", () => {
    expect(jobReducer(pending, { type: "late_handoff", jobId: "j1" })).toEqual({ kind: "idle", lastJobId: "j1" });
    expect(canStart(jobReducer(pending, { type: "late_handoff", jobId: "j1" }))).toBe(true);
  });
  test("only for the pending job", () => {
    expect(jobReducer(ready, { type: "late_handoff", jobId: "j1" })).toBe(ready);
    expect(jobReducer(idle, { type: "late_handoff", jobId: "j1" })).toBe(idle);
  });
});

describe("jobReducer property: events for other job ids never change the state", () => {
  const states = [idle, pending, ready, readyHanded, stale, failed];
  const foreign = fc.constantFrom<JobEvent>(
    { type: "settled_ok", jobId: "other", result: RESULT },
    { type: "settled_error", jobId: "other", error: "e" },
    { type: "timeout", jobId: "other" },
    { type: "invalidate", jobId: "other", reason: "cancelled" },
    { type: "superseded", jobId: "other", cause: "too_large", next: snap("j5") },
    { type: "persisted", jobId: "other" },
    { type: "handed_off", jobId: "other", via: "turn_end_draft" },
    { type: "applied", jobId: "other" },
    { type: "apply_failed", jobId: "other", error: "e" },
    { type: "late_handoff", jobId: "other" },
  );
  test("identity", () => {
    fc.assert(fc.property(fc.constantFrom(...states), foreign, (s, e) => jobReducer(s, e) === s));
  });
});
