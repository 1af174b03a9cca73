/**
 * Thin compatibility layer for adapters written for pi-async-compaction's `./core`
 * (`prepare({ ctx, settings })`, `createSnapshot({ ctx, jobId, prepared, settings })`,
 * `run({ ctx, prepared, signal })`, `toCompaction({ prepared, snapshot, result })`).
 *
 * The anchor adapter keeps its cut, prompt version, summary and details. The validation keys
 * (session, model, thinking level, settings, snapshot leaf) stay the core's own, computed the
 * core's way, so the apply checks compare like with like whatever format the adapter uses.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AsyncCompactionAdapter } from "./adapter.ts";
import type { ReadyCompaction } from "./job-reducer.ts";
import type { CompactionSettings } from "./primitives.ts";

/** pi-async-compaction's `Snapshot`. */
export interface AnchorSnapshot {
  readonly jobId: string;
  readonly sessionId: string;
  readonly snapshotLeafId: string;
  readonly firstKeptEntryId: string;
  readonly modelKey: string;
  readonly thinkingLevel: string;
  readonly settingsKey: string;
  readonly promptVersion: string;
}

/** pi-async-compaction's `AsyncCompactionAdapter<TPrepared, TResult>`. */
export interface AnchorAsyncCompactionAdapter<TPrepared, TResult> {
  readonly id: string;
  readonly label: string;
  prepare(input: { readonly ctx: ExtensionContext; readonly settings: CompactionSettings }): TPrepared | undefined;
  createSnapshot(input: { readonly ctx: ExtensionContext; readonly jobId: string; readonly prepared: TPrepared; readonly settings: CompactionSettings }): AnchorSnapshot;
  run(input: { readonly ctx: ExtensionContext; readonly prepared: TPrepared; readonly signal: AbortSignal }): Promise<TResult>;
  toCompaction(input: { readonly prepared: TPrepared; readonly snapshot: AnchorSnapshot; readonly result: TResult }): {
    summary: string;
    firstKeptEntryId: string;
    tokensBefore: number;
    details?: unknown;
    usage?: unknown;
  };
}

/** What the core holds for one job of an anchor adapter. */
export interface AnchorPrepared<TPrepared> {
  prepared: TPrepared;
  snapshot: AnchorSnapshot;
}

/**
 * An adapter is taken for an anchor one when its `createSnapshot` and `run` each take a
 * single input object (this package's take two parameters). Wrap explicitly with
 * `fromAnchorAdapter` to avoid relying on the heuristic.
 */
export function isAnchorAdapter(adapter: { createSnapshot: (...a: never[]) => unknown; run: (...a: never[]) => unknown }): boolean {
  return adapter.createSnapshot.length <= 1 && adapter.run.length <= 1;
}

export function fromAnchorAdapter<TPrepared, TResult>(
  anchor: AnchorAsyncCompactionAdapter<TPrepared, TResult>,
  options: { newJobId?: () => string } = {},
): AsyncCompactionAdapter<AnchorPrepared<TPrepared>, TResult> {
  let counter = 0;
  const newJobId = options.newJobId ?? (() => `${anchor.id}-${Date.now().toString(36)}-${++counter}`);
  return {
    id: anchor.id,
    label: anchor.label,
    prepare: ({ ctx, settings }) => {
      const prepared = anchor.prepare({ ctx, settings });
      if (prepared === undefined) return undefined;
      return { prepared, snapshot: anchor.createSnapshot({ ctx, jobId: newJobId(), prepared, settings }) };
    },
    createSnapshot: ({ snapshot }, context) => ({ ...context, firstKeptEntryId: snapshot.firstKeptEntryId, promptVersion: snapshot.promptVersion }),
    run: ({ prepared }, { ctx, signal }) => anchor.run({ ctx, prepared, signal }),
    toCompaction: (result, { prepared, snapshot }): ReadyCompaction => {
      const c = anchor.toCompaction({ prepared, snapshot, result });
      return { summary: c.summary, firstKeptEntryId: c.firstKeptEntryId, tokensBefore: c.tokensBefore, details: c.details, usage: c.usage };
    },
  };
}
