/**
 * A ready summary survives a restart as one custom entry. On `session_start` the newest
 * such entry on the branch is read back and revalidated before it may be applied.
 */
import { z } from "zod";
import type { JobSnapshot, ReadyCompaction } from "./job-reducer.ts";
import type { SessionEntry } from "./primitives.ts";

export const READY_ENTRY_TYPE = "context-keeper/async-compaction-ready";
/** Key under `details` that marks a compaction entry as this subsystem's. */
export const COMPACTION_MARKER_KEY = "contextKeeperAsyncCompaction";

export const jobSnapshotSchema = z.object({
  jobId: z.string(),
  sessionId: z.string(),
  snapshotLeafId: z.string(),
  firstKeptEntryId: z.string(),
  modelKey: z.string(),
  thinkingLevel: z.string(),
  settingsKey: z.string(),
  promptVersion: z.string(),
  adapterId: z.string(),
  manual: z.boolean(),
  startedAt: z.number(),
});

export const readyCompactionSchema = z.object({
  summary: z.string().min(1),
  firstKeptEntryId: z.string(),
  tokensBefore: z.number(),
  details: z.unknown().optional(),
  usage: z.unknown().optional(),
});

export const readyEntrySchema = z.object({
  version: z.literal(1),
  snapshot: jobSnapshotSchema,
  result: readyCompactionSchema,
});

export type ReadyEntryData = z.infer<typeof readyEntrySchema>;

export function readyEntryData(snapshot: JobSnapshot, result: ReadyCompaction): ReadyEntryData {
  return readyEntrySchema.parse({ version: 1, snapshot, result });
}

export interface StoredReady {
  entryId: string;
  data: ReadyEntryData;
  /** A compaction entry appears on the branch after the ready entry. */
  compactedSince: boolean;
  /** That later compaction is the one this job produced. */
  appliedSince: boolean;
}

/** pi-async-compaction's marker key in the compaction entries it made. */
export const ANCHOR_MARKER_KEY = "asyncPrefixCompaction";

/** A background compaction's marker, from this package or from pi-async-compaction. */
export interface CompactionMarker {
  source: "context-keeper" | "pi-async-compaction";
  jobId: string;
  adapterId?: string;
  promptVersion?: string;
}

/**
 * Which background compaction made an entry, if any: this package's marker or
 * pi-async-compaction's (`details.asyncPrefixCompaction.jobId`), so sessions compacted by
 * either are recognised. Only this package's markers are ever claimed as our own job.
 */
export function readCompactionMarker(details: unknown): CompactionMarker | undefined {
  const ours = markerOf(details);
  if (ours) return { source: "context-keeper", ...ours, ...promptVersionOf((details as Record<string, unknown>)[COMPACTION_MARKER_KEY]) };
  if (!details || typeof details !== "object" || Array.isArray(details)) return undefined;
  const anchor = (details as Record<string, unknown>)[ANCHOR_MARKER_KEY];
  if (!anchor || typeof anchor !== "object" || Array.isArray(anchor)) return undefined;
  const jobId = (anchor as { jobId?: unknown }).jobId;
  if (typeof jobId !== "string") return undefined;
  return { source: "pi-async-compaction", jobId, ...promptVersionOf(anchor) };
}

function promptVersionOf(marker: unknown): { promptVersion?: string } {
  const v = marker && typeof marker === "object" ? (marker as { promptVersion?: unknown }).promptVersion : undefined;
  return typeof v === "string" ? { promptVersion: v } : {};
}

/** Marker read from a compaction entry's details, when it is this subsystem's. */
export function markerOf(details: unknown): { jobId: string; adapterId?: string } | undefined {
  if (!details || typeof details !== "object") return undefined;
  const marker = (details as Record<string, unknown>)[COMPACTION_MARKER_KEY];
  if (!marker || typeof marker !== "object") return undefined;
  const jobId = (marker as { jobId?: unknown }).jobId;
  if (typeof jobId !== "string") return undefined;
  const adapterId = (marker as { adapterId?: unknown }).adapterId;
  return { jobId, adapterId: typeof adapterId === "string" ? adapterId : undefined };
}

/** Newest valid ready entry on the branch for `adapterId`, with what happened after it. */
export function findStoredReady(branch: SessionEntry[], adapterId: string): StoredReady | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type !== "custom" || entry.customType !== READY_ENTRY_TYPE) continue;
    const parsed = readyEntrySchema.safeParse(entry.data);
    if (!parsed.success || parsed.data.snapshot.adapterId !== adapterId) continue;
    const later = branch.slice(i + 1).filter((e) => e.type === "compaction");
    return {
      entryId: entry.id,
      data: parsed.data,
      compactedSince: later.length > 0,
      appliedSince: later.some((e) => e.type === "compaction" && markerOf(e.details)?.jobId === parsed.data.snapshot.jobId),
    };
  }
  return undefined;
}

/** Pi's `details` for the compaction entry: the adapter's details plus this subsystem's marker. */
export function markedDetails(snapshot: JobSnapshot, details: unknown): Record<string, unknown> {
  const base = details && typeof details === "object" && !Array.isArray(details) ? (details as Record<string, unknown>) : {};
  return { ...base, [COMPACTION_MARKER_KEY]: { ...snapshot } };
}
