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

export type LateDigestPreparation = Pick<CompactionPreparation, "firstKeptEntryId" | "messagesToSummarize" | "turnPrefixMessages" | "previousSummary" | "fileOps"> & {
  settings: Pick<CompactionPreparation["settings"], "reserveTokens">;
};

/**
 * The most a late digest's summary may hold (characters): what Pi lets its own summary be
 * (0.8 × reserveTokens tokens) at 4 characters a token, so a digest never makes the context
 * after the compaction larger than Pi's would be, and late digests in a row never grow it.
 */
export function lateDigestMaxChars(reserveTokens: number): number {
  return Math.max(4_000, Math.floor(0.8 * reserveTokens) * 4);
}

export interface LateDigestCompaction {
  summary: string;
  firstKeptEntryId: string;
  /** Pi's file lists, as its own compaction records them. */
  details: { readFiles: string[]; modifiedFiles: string[] };
}

/** The compaction applied in a late job's place: Pi's cut, the previous summary, a digest of the rest. */
export function lateDigestCompaction(preparation: LateDigestPreparation): LateDigestCompaction {
  const messages: AgentMessage[] = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages];
  const maxChars = lateDigestMaxChars(preparation.settings.reserveTokens);
  const ops = preparation.fileOps;
  const modifiedFiles = [...new Set([...ops.edited, ...ops.written])].sort();
  const readFiles = [...ops.read].filter((f) => !modifiedFiles.includes(f)).sort();
  const previousText = boundedPrevious(preparation.previousSummary?.trim() ? preparation.previousSummary : "", maxChars);
  const previous = previousText ? `${previousText}\n\n---\n\n` : "";
  const budget = maxChars - previous.length;
  const lines = newestWithin(capLines(messages.flatMap((m) => digestLines(m, { userChars: LATE_DIGEST_USER_CHARS }))), budget);
  const digest = lines.length > 0 ? lines.join("\n") : "- (nothing but the kept messages)";
  return {
    summary: `${previous}${LATE_DIGEST_HEADING}\n\n${digest}${fileTags(readFiles, modifiedFiles)}`,
    firstKeptEntryId: preparation.firstKeptEntryId,
    details: { readFiles, modifiedFiles },
  };
}

/**
 * A previous summary that would leave the new digest less than a quarter of the cap (only late
 * digests in a row make one): its head, and how much was left out.
 */
function boundedPrevious(text: string, maxChars: number): string {
  if (text.length <= Math.floor((maxChars * 3) / 4)) return text;
  const head = Math.floor(maxChars / 2);
  return `${text.slice(0, head)}\n\n- (${(text.length - head).toLocaleString("en-US")} characters of earlier digests left out)`;
}

/**
 * The newest lines within `budget` characters, with a line saying how many were left out; the
 * first line is kept too when it is the user's (the task as stated) and takes at most half.
 */
function newestWithin(lines: string[], budget: number): string[] {
  const total = lines.reduce((sum, l) => sum + l.length + 1, 0);
  if (total <= budget) return lines;
  const pin = lines[0]?.startsWith("- user: ") && lines[0].length + 1 <= budget / 2 ? lines[0] : undefined;
  const floor = pin ? 1 : 0;
  let used = (pin ? pin.length + 1 : 0) + OMITTED_NOTE_CHARS;
  let from = lines.length;
  while (from > floor && used + lines[from - 1].length + 1 <= budget) used += lines[--from].length + 1;
  return [...(pin ? [pin] : []), `- (${from - floor} earlier lines of the digest left out)`, ...lines.slice(from)];
}

/** Room kept for the "left out" line. */
const OMITTED_NOTE_CHARS = 64;

/**
 * A job whose place Pi's compaction took (`late-digest.ts`): Pi applied an extractive digest
 * while the job ran on. `cutEntryId` is the digest's cut; `gap` what lies between the job's cut
 * and it (digested again after the job's summary when it comes); `compactionEntryId` the
 * applied digest's entry, once Pi reported it.
 */
export interface LateHandoff {
  cutEntryId: string;
  gap: unknown[];
  compactionEntryId?: string;
}

/**
 * What the late job's summary stands for once it comes: its own summary, caught up from the
 * job's cut to the digest's (`gap`: the messages between the two, digested after it).
 */
export function upgradedSummary(result: ReadyCompaction, late: Pick<LateHandoff, "cutEntryId" | "gap">): string {
  return withGapDigest(result, { firstKeptEntryId: late.cutEntryId, gapMessages: late.gap as AgentMessage[] }).summary;
}
