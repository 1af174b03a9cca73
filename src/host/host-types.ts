/**
 * Shapes the host's pieces share: what triggers a flush, what a flush reports, and the one
 * mutable record the host keeps per session (the engine's state plus what only the host
 * holds: the summarizer's cache and abort, entries waiting to be appended, diagnostics, the
 * live-only cache diagnostics).
 */
import type { FlushDecision } from "../flush/plan.ts";
import { initialEngineState, type EngineState, type FlushResult } from "../engine/index.ts";
import type { BustAttribution, FingerprintLog } from "../discipline/schema.ts";
import { emptyFingerprintLog } from "../discipline/attribution.ts";
import { emptyRewriteTally, type RewriteTally } from "../discipline/rewrite-tally.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import type { BodyDigest } from "../cache/body-digest.ts";
import type { TailHash } from "../discipline/attribution.ts";

/** "cold": a re-plan without new summaries at a request whose cache is already lost. */
export type FlushTrigger = "request-end" | "budget" | "manual" | "cold";

export interface FlushReport {
  trigger: FlushTrigger;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
}

export interface HostMemory {
  engine: EngineState;
  diagnostics: string[];
  report: FlushReport | undefined;
  /** Aborts the running flush's summarizer (set while it summarizes). */
  abort: AbortController | undefined;
  /** Summaries already made, by batch content: a re-run flush does not pay for them twice. */
  readonly summaryCache: Map<string, BatchSummary>;
  /** Summarizer notices already shown, so each is shown once. */
  readonly notices: Set<string>;
  /** Cold re-plans decided at a render, appended once the request is on its way. */
  toPersist: FlushResult[];
  /** The last main request body's flat blocks and fingerprints: the next one is digested against it. */
  bodyDigest: BodyDigest | undefined;
  /** The last main request's tail hash (blocks after the seam), continued by the next one. */
  tailHash: TailHash | undefined;
  /** Per-layer fingerprints and bust attributions, for `/keeper cache`. */
  fingerprints: FingerprintLog;
  attributions: BustAttribution[];
  /** Requests, busts and where each flush rewrite went on the wire since this process started, for `/keeper cache`. */
  tally: RewriteTally;
}

export function emptyHostMemory(): HostMemory {
  return {
    engine: initialEngineState(),
    diagnostics: [],
    report: undefined,
    abort: undefined,
    summaryCache: new Map(),
    notices: new Set(),
    toPersist: [],
    bodyDigest: undefined,
    tailHash: undefined,
    fingerprints: emptyFingerprintLog(),
    attributions: [],
    tally: emptyRewriteTally(),
  };
}
