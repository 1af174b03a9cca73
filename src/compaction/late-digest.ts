/**
 * When the job is late: Pi must compact now (its threshold with no room left, or an overflow),
 * the background summary is still running, and waiting for it would stall the user longer
 * than the stall budget (`PI_ASYNC_PREFIX_COMPACTION_STALL_MS`). Pi then gets, at once, a
 * compaction of its own cut whose summary is the previous summary followed by an extractive
 * digest of what Pi would have summarized (no model call). The job runs on; when its summary
 * comes it is caught up to the digest's cut (`withGapDigest`) and written as the digest's
 * upgrade (`late-digest-entry.ts`), which the next background summary starts from, so the
 * model's reading of that stretch is not lost. Pure.
 */
import { capLines, digestLines, fileTags, withGapDigest } from "./catch-up.ts";
import type { ReadyCompaction } from "./job-reducer.ts";
import type { AgentMessage, CompactionPreparation } from "./primitives.ts";

/**
 * User text kept in a late digest: it stands in for a whole summary, and the user's messages
 * are where the task is stated (the catch-up digest, which follows a model summary, keeps 300).
 */
export const LATE_DIGEST_USER_CHARS = 2_000;

export const LATE_DIGEST_HEADING = "**Progress since the previous summary (extractive digest; the model's summary was not ready in time):**";

export type LateDigestPreparation = Pick<CompactionPreparation, "firstKeptEntryId" | "messagesToSummarize" | "turnPrefixMessages" | "previousSummary" | "fileOps">;

export interface LateDigestCompaction {
  summary: string;
  firstKeptEntryId: string;
  /** Pi's file lists, as its own compaction records them. */
  details: { readFiles: string[]; modifiedFiles: string[] };
}

/** The compaction applied in a late job's place: Pi's cut, the previous summary, a digest of the rest. */
export function lateDigestCompaction(preparation: LateDigestPreparation): LateDigestCompaction {
  const messages: AgentMessage[] = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages];
  const lines = capLines(messages.flatMap((m) => digestLines(m, { userChars: LATE_DIGEST_USER_CHARS })));
  const ops = preparation.fileOps;
  const modifiedFiles = [...new Set([...ops.edited, ...ops.written])].sort();
  const readFiles = [...ops.read].filter((f) => !modifiedFiles.includes(f)).sort();
  const previous = preparation.previousSummary?.trim() ? `${preparation.previousSummary}\n\n---\n\n` : "";
  const digest = lines.length > 0 ? lines.join("\n") : "- (nothing but the kept messages)";
  return {
    summary: `${previous}${LATE_DIGEST_HEADING}\n\n${digest}${fileTags(readFiles, modifiedFiles)}`,
    firstKeptEntryId: preparation.firstKeptEntryId,
    details: { readFiles, modifiedFiles },
  };
}

/**
 * What the late job's summary stands for once it comes: its own summary, caught up from the
 * job's cut to the digest's (`gap`: the messages between the two, digested after it).
 */
export function upgradedSummary(result: ReadyCompaction, late: { cutEntryId: string; gap: readonly unknown[] }): string {
  return withGapDigest(result, { firstKeptEntryId: late.cutEntryId, gapMessages: late.gap as AgentMessage[] }).summary;
}
