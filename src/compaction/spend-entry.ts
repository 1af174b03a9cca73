/**
 * The entry that records what a background compaction job's summary calls cost when its
 * summary was never applied: superseded by a newer job, made stale (model, thinking level,
 * tree move, validation), failed, aborted, timed out, the upgrade of a late digest (the digest
 * Pi applied carries no usage), or still waiting when the session shut down. An applied
 * summary's usage is on Pi's compaction entry (Pi records the `usage` the keeper hands it), so
 * every summary request the keeper made is on exactly one entry: the report's "you paid" and
 * `/keeper stats` add these up (`unappliedSpendOf`).
 */
import { z } from "zod";
import type { RunSpend } from "./run-spend.ts";

export const SPEND_ENTRY_TYPE = "context-keeper/compaction-spend";

/** Why the job's summary was not applied (the job's invalidation reason, or how its run ended). */
export type UnappliedReason = string;

export const spendEntrySchema = z.object({
  version: z.literal(1),
  jobId: z.string(),
  /** Why the summary was not applied: an invalidation reason, `failed`, `late` (it upgraded a digest), `shutdown`. */
  reason: z.string(),
  calls: z.number().int().nonnegative(),
  /** Prompt tokens: fresh input plus cache reads and writes. */
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  /** Dollars, as pi-ai priced the calls (the estimate's at the model's input price). */
  cost: z.number().nonnegative(),
  /** A call was stopped before the provider reported usage: its part is the estimate of what was sent. */
  estimated: z.literal(true).optional(),
});

export type SpendEntry = z.infer<typeof spendEntrySchema>;

export function spendEntryData(jobId: string, reason: UnappliedReason, spend: RunSpend): SpendEntry {
  return spendEntrySchema.parse({
    version: 1,
    jobId,
    reason,
    calls: spend.calls,
    inputTokens: spend.inputTokens,
    outputTokens: spend.outputTokens,
    cost: spend.cost,
    ...(spend.estimated ? { estimated: true } : {}),
  });
}

interface EntryLike {
  type?: unknown;
  customType?: unknown;
  data?: unknown;
}

/** The spend an entry records, if it is a well-formed spend entry. */
export function spendOf(entry: EntryLike): SpendEntry | undefined {
  if (entry.type !== "custom" || entry.customType !== SPEND_ENTRY_TYPE) return undefined;
  const parsed = spendEntrySchema.safeParse(entry.data);
  return parsed.success ? parsed.data : undefined;
}

/** Unapplied background summaries, added up: jobs, calls, tokens, dollars. */
export interface UnappliedSpend {
  jobs: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  estimated: boolean;
}

export const NO_UNAPPLIED_SPEND: UnappliedSpend = { jobs: 0, calls: 0, inputTokens: 0, outputTokens: 0, cost: 0, estimated: false };

/** The spend entries among `entries` (a whole session file, every branch: each was paid), one per job. */
export function unappliedSpendOf(entries: Iterable<EntryLike>): UnappliedSpend {
  const seen = new Set<string>();
  let total = NO_UNAPPLIED_SPEND;
  for (const entry of entries) {
    const s = spendOf(entry);
    if (!s || seen.has(s.jobId)) continue;
    seen.add(s.jobId);
    total = {
      jobs: total.jobs + 1,
      calls: total.calls + s.calls,
      inputTokens: total.inputTokens + s.inputTokens,
      outputTokens: total.outputTokens + s.outputTokens,
      cost: total.cost + s.cost,
      estimated: total.estimated || s.estimated === true,
    };
  }
  return total;
}

/** Whether `entries` hold a spend entry for job `jobId` (its spend is counted there). */
export function spendRecorded(entries: Iterable<EntryLike>, jobId: string): boolean {
  for (const entry of entries) if (spendOf(entry)?.jobId === jobId) return true;
  return false;
}
