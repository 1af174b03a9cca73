/**
 * The index of pruned originals. Pi keeps every raw tool result in the session file (the
 * `context` hook only changes the request), so the index stores where to find an original
 * and how to verify it (sha256, size), not the text. Outputs above a size threshold are also
 * spilled to a side file, so they survive a branch switch or a compaction-only session view.
 */
import { z } from "zod";
import type { CapturedCall } from "../summarize/batch.ts";
import { sha256Hex, utf8ByteLength } from "../summarize/text-measure.ts";

export const recallEntrySchema = z.object({
  occurrenceKey: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
  /** Session entry id of the tool result message, when the capture knew it. */
  entryId: z.string().optional(),
  /** Timestamp of the tool result message (ms). */
  timestamp: z.number(),
  assistantTimestamp: z.number(),
  isError: z.boolean(),
  /** UTF-8 size of the original text. */
  bytes: z.number().int().nonnegative(),
  /** JS string length of the original text (what recall offsets count). */
  chars: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Side file holding the original verbatim, for outputs above the spill threshold. */
  spillPath: z.string().optional(),
  /** First characters of a spilled original, for stubs. */
  preview: z.string().optional(),
});

export const recallIndexSchema = z.object({
  version: z.literal(1),
  entries: z.record(z.string(), recallEntrySchema),
});

export type RecallEntry = z.infer<typeof recallEntrySchema>;
export type RecallIndex = z.infer<typeof recallIndexSchema>;

export function emptyRecallIndex(): RecallIndex {
  return { version: 1, entries: {} };
}

export interface SpillWrite {
  path: string;
  /** The original, verbatim: write it as UTF-8. */
  text: string;
}

export interface SpillOptions {
  /** Originals of at least this many UTF-8 bytes are spilled. Default 65536. */
  thresholdBytes?: number;
  /** Where the side file of an original goes (e.g. beside the session file). */
  pathFor: (call: CapturedCall, sha256: string) => string;
  /** Characters of a spilled original kept in the index as a preview. Default 2000. */
  previewChars?: number;
}

export const DEFAULT_SPILL_THRESHOLD_BYTES = 64 * 1024;

/**
 * Add the originals of captured calls. Pure: returns the new index and the side files the
 * shell must write. Already indexed occurrences are left as they are (idempotent).
 */
export function recordOriginals(
  index: RecallIndex,
  options: { calls: readonly CapturedCall[]; entryIdOf?: (call: CapturedCall) => string | undefined; spill?: SpillOptions },
): { index: RecallIndex; spills: SpillWrite[] } {
  const entries = { ...index.entries };
  const spills: SpillWrite[] = [];
  const threshold = options.spill?.thresholdBytes ?? DEFAULT_SPILL_THRESHOLD_BYTES;
  for (const call of options.calls) {
    if (entries[call.occurrenceKey]) continue;
    const sha256 = sha256Hex(call.resultText);
    const bytes = utf8ByteLength(call.resultText);
    const entry: RecallEntry = {
      occurrenceKey: call.occurrenceKey,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      timestamp: call.resultTimestamp,
      assistantTimestamp: call.assistantTimestamp,
      isError: call.isError,
      bytes,
      chars: call.resultText.length,
      sha256,
    };
    const entryId = options.entryIdOf?.(call);
    if (entryId !== undefined) entry.entryId = entryId;
    if (options.spill && bytes >= threshold) {
      entry.spillPath = options.spill.pathFor(call, sha256);
      entry.preview = call.resultText.slice(0, options.spill.previewChars ?? 2000);
      if (!spills.some((s) => s.path === entry.spillPath)) spills.push({ path: entry.spillPath, text: call.resultText });
    }
    entries[call.occurrenceKey] = entry;
  }
  return { index: { version: 1, entries }, spills };
}

export interface SpillFailure {
  path: string;
  /** The writer's error message (e.g. `EACCES: permission denied, open …`). */
  error: string;
}

export interface SpillOutcome {
  written: string[];
  failed: SpillFailure[];
}

/**
 * Apply spill writes with an injected writer (e.g. `fs.promises.writeFile(path, text, "utf8")`).
 * Never throws: a write that fails (a full disk, no permission, a file where the folder should
 * be) is reported, and the others are still attempted. A spill is a second copy: the original
 * stays in the session file, so a flush commits without it (see `withoutFailedSpills`).
 */
export async function writeSpills(spills: readonly SpillWrite[], write: (path: string, text: string) => Promise<void>): Promise<SpillOutcome> {
  const outcome: SpillOutcome = { written: [], failed: [] };
  for (const s of spills) {
    try {
      await write(s.path, s.text);
      outcome.written.push(s.path);
    } catch (error) {
      outcome.failed.push({ path: s.path, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return outcome;
}

/**
 * The index without the spill side of entries whose side file could not be written: they
 * keep everything that finds and verifies the original in the session (sha256, size, ids).
 * Returns the same index when nothing failed.
 */
export function withoutFailedSpills(index: RecallIndex, failed: readonly SpillFailure[]): RecallIndex {
  if (failed.length === 0) return index;
  const paths = new Set(failed.map((f) => f.path));
  const entries = { ...index.entries };
  for (const [key, entry] of Object.entries(entries)) {
    if (entry.spillPath === undefined || !paths.has(entry.spillPath)) continue;
    const { spillPath: _spill, preview: _preview, ...kept } = entry;
    entries[key] = kept;
  }
  return { version: 1, entries };
}

function indexInMessage(occurrenceKey: string): number {
  const m = /#(\d+)$/.exec(occurrenceKey);
  return m ? Number(m[1]) : 0;
}

/** Newest first: result time, then assistant time, then position in the message. */
export function newestFirst(a: RecallEntry, b: RecallEntry): number {
  return b.timestamp - a.timestamp || b.assistantTimestamp - a.assistantTimestamp || indexInMessage(b.occurrenceKey) - indexInMessage(a.occurrenceKey);
}

/** Every occurrence of a provider tool-call id (ids can repeat within a session), newest first. */
export function occurrencesOf(index: RecallIndex, toolCallId: string): RecallEntry[] {
  return Object.values(index.entries)
    .filter((e) => e.toolCallId === toolCallId)
    .sort(newestFirst);
}
