/** Shared checks for wire-level e2e tests: busts, flush points, sizes, a clean run. */
import { expect } from "bun:test";
import { analyzeRun, type RequestAnalysis } from "../../../src/cache/analyzer.ts";
import type { TimedRequest, WireRequestBody } from "../../../src/cache/wire-types.ts";
import type { RecordedRequest } from "../../support/fake-anthropic/index.ts";
import { frontiersAlong } from "../../support/state/flush-entries.ts";

export function analyze(requests: RecordedRequest[]): RequestAnalysis[] {
  const timed: TimedRequest[] = requests.map((r) => ({ body: r.body as unknown as WireRequestBody, timestamp: r.arrivedAtMs }));
  return analyzeRun(timed);
}

export function bustIndices(analyses: RequestAnalysis[]): number[] {
  return analyses.flatMap((a, i) => (a.bust ? [i] : []));
}

/** Arrival times (ms) of the flush entries that moved the frontier (a delta or a checkpoint). */
export function frontierEntryTimes(entries: Array<Record<string, unknown>>): number[] {
  return frontiersAlong(entries).map(({ entry }) => Date.parse(String(entry.timestamp)));
}

/**
 * Requests that are the first after at least one flush was persisted (a flush entry
 * written after the previous request arrived and before this one).
 */
export function firstRequestsAfterFlush(requests: RecordedRequest[], flushTimes: number[]): Set<number> {
  const out = new Set<number>();
  for (let i = 1; i < requests.length; i++) {
    const from = requests[i - 1]!.arrivedAtMs;
    const to = requests[i]!.arrivedAtMs;
    if (flushTimes.some((t) => t >= from && t <= to)) out.add(i);
  }
  return out;
}

export function messagesChars(r: RecordedRequest): number {
  return JSON.stringify(r.body.messages).length;
}

export function withoutCacheControl<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === "cache_control" ? undefined : v))) as T;
}

/** A run in which every request was answered, no extension reported an error and every scripted main step was requested. */
export function expectCleanRun(r: { requests: RecordedRequest[]; mainRequests: RecordedRequest[]; records: Array<{ type: string }> }, mainSteps: number): void {
  expect(r.requests.filter((q) => q.status !== 200).map((q) => `${q.status} ${q.errorMessage}`)).toEqual([]);
  expect(r.records.filter((x) => x.type === "extension_error")).toEqual([]);
  expect(r.mainRequests).toHaveLength(mainSteps);
}
