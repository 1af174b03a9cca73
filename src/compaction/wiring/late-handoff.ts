/**
 * The late job (`late-digest.ts`) in Pi's flow: `session_before_compact` hands Pi a digest of
 * its own cut in the pending job's place, `session_compact` records the entry Pi wrote for
 * it, and the job's summary, when it comes, is written as that entry's upgrade.
 */
import type { ExtensionContext, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import type { ReadyCompaction } from "../job-reducer.ts";
import { type LateHandoff, lateDigestCompaction, upgradedSummary } from "../late-digest.ts";
import { UPGRADE_ENTRY_TYPE, type UpgradeEntry } from "../late-digest-entry.ts";
import { markedDetails } from "../persistence.ts";
import { messagesBetween, prepareCompaction } from "../prepare.ts";
import type { CompactionResult } from "../primitives.ts";
import type { RegistrationContext } from "./context.ts";
import { lateDigestNotice, sayAfterCompaction } from "./notify.ts";

/**
 * The digest compaction for Pi's compaction now, with the pending job marked late; undefined
 * when the job is no longer the pending one.
 */
export function handOverLate(rc: RegistrationContext, input: { event: SessionBeforeCompactEvent; jobId: string }): { compaction: CompactionResult } | undefined {
  const { controller: c, emit } = rc;
  const s = c.current;
  if (s.kind !== "pending" || s.job.jobId !== input.jobId) return undefined;
  const preparation = input.event.preparation;
  // The previous summary as the next job would read it: a late job's upgrade where one was written.
  const ours = prepareCompaction(input.event.branchEntries, preparation.settings, rc.options.primitives);
  const digest = lateDigestCompaction({ ...preparation, previousSummary: ours?.previousSummary ?? preparation.previousSummary });
  // What the job's summary will not cover once it comes: from its cut to the digest's.
  const gap = messagesBetween(input.event.branchEntries, s.job.firstKeptEntryId, digest.firstKeptEntryId, rc.options.primitives) ?? [];
  c.handOffLate(input.jobId, digest.firstKeptEntryId, gap);
  emit({ kind: "apply", jobId: input.jobId, path: "late_digest", outcome: "handed_off" });
  return {
    compaction: {
      summary: digest.summary,
      firstKeptEntryId: digest.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      details: markedDetails(s.job, { ...digest.details, lateDigest: true }),
    },
  };
}

/** `session_compact` of our digest: the late job now knows the entry its summary will upgrade. */
export function recordLateApplied(rc: RegistrationContext, input: { ctx: ExtensionContext; jobId: string; compactionEntryId: string; tokensBefore: number }): boolean {
  if (!rc.controller.lateApplied(input.jobId, input.compactionEntryId)) return false;
  rc.emit({ kind: "apply", jobId: input.jobId, path: "late_digest", outcome: "applied" });
  sayAfterCompaction(rc, input.ctx, lateDigestNotice(rc.adapter.label, input.tokensBefore));
  return true;
}

/** The late job's summary came: written as the upgrade of the digest Pi applied (when Pi reported it). */
export function onLateResult(rc: RegistrationContext, jobId: string, result: ReadyCompaction, late: LateHandoff): void {
  if (!late.compactionEntryId) {
    rc.emit({ kind: "diagnostic", message: `late job ${jobId}: its digest was never reported applied; the summary is dropped` });
    return;
  }
  // Written on the branch that holds the digest only (after a /tree move elsewhere it would be an orphan).
  const branch = rc.controller.lastCtx?.sessionManager.getBranch();
  if (branch && !branch.some((e) => e.id === late.compactionEntryId)) {
    rc.emit({ kind: "diagnostic", message: `late job ${jobId}: its digest is not on the current branch; the summary is dropped` });
    return;
  }
  const data: UpgradeEntry = { version: 1, compactionEntryId: late.compactionEntryId, jobId, summary: upgradedSummary(result, late) };
  try {
    rc.pi.appendEntry(UPGRADE_ENTRY_TYPE, data);
    rc.emit({ kind: "apply", jobId, path: "late_digest", outcome: "upgraded" });
  } catch (error) {
    rc.emit({ kind: "diagnostic", message: `late job ${jobId}: the upgrade was not written (${error instanceof Error ? error.message : String(error)})` });
  }
}
