/**
 * Fidelity of pruning on a recorded session: of the file paths and commands of every
 * pruned tool batch, which fraction the context the keeper renders for the session's last
 * request still shows. Two ways of counting:
 *
 * - **own** (the headline): a fact counts only when the batch's OWN text names it — the stub
 *   texts of its calls (following a pointer stub to the stub it points at: "summarized with
 *   ref=…" inside a batch, "identical to the output of ref=…" for a duplicate), the collapsed
 *   chain text that replaced it, or, for a purged failed call, its untouched output and the
 *   purge note — plus the batch's own call arguments where the render keeps them. Output paths
 *   counted this way are the part pruning can really lose (arguments are kept by design).
 * - **anywhere**: a fact counts when it appears anywhere in the render (stubs, chain texts,
 *   purge notes, or any other message that happens to name them). Kept beside the headline.
 *
 * The session is replayed with the keeper's pure pipeline (`createKeeperReplayEngine`,
 * the same engine as the replay report) and a summarizer chosen by the caller (the
 * deterministic extractive one by default). A call counts as pruned when the final render
 * no longer shows it as it was: its result is stubbed or aliased, its chain is collapsed,
 * or its arguments are purged. Facts are the ones the summarizer's fidelity check uses
 * (`batchFacts`: argument paths, paths named in the output, commands).
 *
 * Pure over the session text: no I/O, no clock.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { pairToolCalls, type CallOccurrence } from "../../src/prune/occurrence.ts";
import { DEFAULT_SETTINGS } from "../../src/settings/parse.ts";
import type { KeeperSettings } from "../../src/settings/schema.ts";
import { type ContextMessage, isToolResult, toolResultText } from "../../src/session/messages.ts";
import type { KeeperState } from "../../src/state/schema.ts";
import { type ToolBatch, occurrenceKey } from "../../src/summarize/batch.ts";
import { batchFacts } from "../../src/summarize/fidelity.ts";
import { extractCallFacts } from "../../src/summarize/output-facts.ts";
import { keeperReplayConfig } from "../../src/report/keeper-config.ts";
import { createKeeperReplayEngine, type KeeperRequestInfo } from "../../src/report/keeper-engine.ts";
import { recordedRequestPoints } from "../../src/report/pi-session-contexts.ts";
import { extractiveReplaySummarizer, type ReplaySummarizer } from "../../src/report/replay-summaries.ts";
import { prunedCallsOf } from "../../src/recall/pruned-calls.ts";
import { stubIndexOf } from "../../src/prune/stub-text.ts";
import { parseSessionText } from "../../src/report/session-file.ts";

export type FactKind = "argumentPath" | "outputPath" | "command";

/** How a call was pruned in the final render. */
export type PruneKind = "stubbed" | "aliased" | "chain" | "purged";

export interface FactCount {
  total: number;
  visible: number;
}

export interface MissingFact {
  batchKey: string;
  kind: FactKind;
  value: string;
}

export interface FidelityReport {
  /** Requests replayed (billed Anthropic requests, as the replay report counts them). */
  requests: number;
  flushes: number;
  /** Batches with at least one pruned call in the final render. */
  prunedBatches: number;
  prunedCalls: Record<PruneKind, number>;
  /** Paths (argument and output) and commands together. */
  all: FactCount;
  byKind: Record<FactKind, FactCount>;
  /** visible / total over `all`; 1 when there is nothing to measure. */
  fraction: number;
  missing: MissingFact[];
  /** The same facts counted in each batch's own text only (see the module comment). */
  own: { all: FactCount; byKind: Record<FactKind, FactCount>; fraction: number; missing: MissingFact[] };
  /** Characters of the final rendered context text the facts were looked up in. */
  renderedChars: number;
  /**
   * Recall refs (`ref=<occurrence key>`) the final render offers, and how many of them an
   * index fed with (a) the summarized batches only, (b) every hidden call (`prunedCallsOf`)
   * would hold.
   */
  refs: { shown: number; inSummarizedBatches: number; inPrunedCalls: number; notRecallable: string[] };
}

export interface FidelityOptions {
  /** The session file's JSONL text. */
  sessionText: string;
  file?: string;
  settings?: KeeperSettings;
  summarize?: ReplaySummarizer;
  /** Context window for the budget trigger. Default: the replay engine's 200k. */
  contextWindow?: (info: KeeperRequestInfo) => number;
}

/** Every string a message shows the model: texts, thinking, tool-call names and argument values, results. */
export function visibleText(messages: readonly ContextMessage[]): string {
  const out: string[] = [];
  const strings = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(strings);
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) out.push(k), strings(x);
    else if (v !== undefined) out.push(String(v));
  };
  for (const m of messages) {
    const r = m as unknown as Record<string, unknown>;
    for (const field of ["command", "output", "summary"]) if (typeof r[field] === "string") out.push(r[field] as string);
    const content = r.content;
    if (typeof content === "string") out.push(content);
    else if (Array.isArray(content)) {
      for (const b of content as Array<Record<string, unknown>>) {
        if (b.type === "text") out.push(String(b.text ?? ""));
        else if (b.type === "thinking") out.push(String(b.thinking ?? ""));
        else if (b.type === "toolCall") {
          out.push(String(b.name ?? ""));
          strings(b.arguments);
        }
      }
    }
  }
  return out.join("\n");
}

/** Pruned occurrence keys of the final state, by how they were pruned (a key gets its first kind). */
export function prunedKeysOf(state: KeeperState, renderedText: string): Map<string, PruneKind> {
  const out = new Map<string, PruneKind>();
  const add = (key: string, kind: PruneKind) => {
    if (!out.has(key)) out.set(key, kind);
  };
  // A chain recorded at a flush counts only when the render really collapsed it.
  for (const chain of state.frontier.compressedChains) if (renderedText.includes(chain.text)) chain.memberKeys.forEach((k) => add(k, "chain"));
  state.frontier.stubbedKeys.forEach((k) => add(k, "stubbed"));
  Object.keys(state.frontier.aliases).forEach((k) => add(k, "aliased"));
  state.frontier.purgedErrorKeys.forEach((k) => add(k, "purged"));
  return out;
}

/** The pruned calls of the raw context grouped into batches (one per assistant message). */
export function prunedBatchesOf(raw: readonly ContextMessage[], pruned: ReadonlyMap<string, PruneKind>): ToolBatch[] {
  const byAssistant = new Map<number, CallOccurrence[]>();
  for (const c of pairToolCalls(raw).calls) {
    if (!pruned.has(c.key)) continue;
    byAssistant.set(c.assistantIndex, [...(byAssistant.get(c.assistantIndex) ?? []), c]);
  }
  return [...byAssistant.values()].map((group) => {
    const calls = group.map((c) => {
      const r = c.resultIndex === undefined ? undefined : raw[c.resultIndex];
      return {
        occurrenceKey: c.key,
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        arguments: c.arguments,
        resultText: r && isToolResult(r) ? toolResultText(r) : "",
        isError: r !== undefined && isToolResult(r) && r.isError,
        assistantTimestamp: c.assistantTimestamp,
        resultTimestamp: r && isToolResult(r) ? r.timestamp : c.assistantTimestamp,
      };
    });
    return { batchKey: occurrenceKey(group[0].toolCallId, group[0].assistantTimestamp, group[0].ordinal), assistantTimestamp: group[0].assistantTimestamp, calls };
  });
}

/**
 * Which facts of the pruned batches appear in `text`: one text for all of them (the whole
 * render), or each batch's own text.
 */
export function measureBatches(batches: readonly ToolBatch[], text: string | ((batch: ToolBatch) => string)): Pick<FidelityReport, "all" | "byKind" | "fraction" | "missing"> {
  const byKind: Record<FactKind, FactCount> = { argumentPath: { total: 0, visible: 0 }, outputPath: { total: 0, visible: 0 }, command: { total: 0, visible: 0 } };
  const missing: MissingFact[] = [];
  for (const batch of batches) {
    const renderedText = typeof text === "string" ? text : text(batch);
    const facts = batchFacts(batch);
    const argumentPaths = new Set(batch.calls.flatMap((c) => extractCallFacts(c).argumentPaths));
    const labelled: Array<{ kind: FactKind; value: string }> = [
      ...facts.paths.map((value) => ({ kind: (argumentPaths.has(value) ? "argumentPath" : "outputPath") as FactKind, value })),
      ...facts.commands.map((value) => ({ kind: "command" as FactKind, value })),
    ];
    for (const f of labelled) {
      byKind[f.kind].total++;
      if (renderedText.includes(f.value)) byKind[f.kind].visible++;
      else missing.push({ batchKey: batch.batchKey, kind: f.kind, value: f.value });
    }
  }
  const all = Object.values(byKind).reduce((a, c) => ({ total: a.total + c.total, visible: a.visible + c.visible }), { total: 0, visible: 0 });
  return { all, byKind, fraction: all.total === 0 ? 1 : all.visible / all.total, missing };
}

const POINTER = /: (?:summarized with|identical to the output of) ref=(\S+?)[.\s]/;

/**
 * The text a pruned call shows for itself in `rendered`: its stub (and the stub a pointer stub
 * points at, transitively), or the chain text that replaced it, or its purge note with its
 * untouched output; plus its own call's arguments where the render still shows them.
 */
export interface OwnTextContext {
  state: KeeperState;
  rendered: readonly ContextMessage[];
  /** The rendered calls by occurrence key (`renderedCallsOf`). */
  renderedCalls: ReadonlyMap<string, CallOccurrence>;
}

export function renderedCallsOf(rendered: readonly ContextMessage[]): Map<string, CallOccurrence> {
  return new Map(pairToolCalls(rendered).calls.map((c) => [c.key, c]));
}

export function ownTextOfCall(key: string, kind: PruneKind, context: OwnTextContext): string {
  const { state, rendered } = context;
  if (kind === "chain") return state.frontier.compressedChains.filter((c) => c.memberKeys.includes(key)).map((c) => c.text).join("\n");
  const occurrence = context.renderedCalls.get(key);
  const parts: string[] = [];
  if (occurrence) {
    parts.push(visibleText([{ role: "assistant", content: [{ type: "toolCall", id: occurrence.toolCallId, name: occurrence.toolName, arguments: occurrence.arguments }] } as unknown as ContextMessage]));
  }
  if (kind === "purged") {
    const r = occurrence?.resultIndex === undefined ? undefined : rendered[occurrence.resultIndex];
    if (r && isToolResult(r)) parts.push(toolResultText(r));
    return parts.join("\n");
  }
  const stubs = stubIndexOf(state).textByKey;
  const seen = new Set<string>();
  for (let k: string | undefined = key; k !== undefined && !seen.has(k); ) {
    seen.add(k);
    const stub = stubs.get(k);
    if (stub === undefined) break;
    parts.push(stub);
    k = POINTER.exec(stub)?.[1];
  }
  return parts.join("\n");
}

export function measureFidelity(options: FidelityOptions): FidelityReport {
  const file = options.file ?? "<session>";
  const { points } = recordedRequestPoints(parseSessionText(options.sessionText, file));
  const summarize = options.summarize ?? extractiveReplaySummarizer();
  const summarizedKeys = new Set<string>();
  const config = keeperReplayConfig(options.settings ?? DEFAULT_SETTINGS);
  const engine = createKeeperReplayEngine({
    // Every batch goes to the caller's summarizer: the measure is of that summarizer.
    config: { ...config, summarizer: { ...config.summarizer, mode: "model" } },
    summarize: (batch) => {
      for (const c of batch.calls) summarizedKeys.add(c.occurrenceKey);
      return summarize(batch);
    },
    ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}),
  });
  let requests = 0;
  let raw: AgentMessage[] = [];
  let rendered: AgentMessage[] = [];
  for (const point of points) {
    const a = point.assistant;
    const u = a.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    // The same requests the replay report counts: Anthropic ones the provider billed.
    if (a.api !== "anthropic-messages" || (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) === 0) continue;
    raw = point.context;
    rendered = engine.transformContext(point.context, requests, { timestamp: a.timestamp, provider: a.provider, api: a.api, model: a.model });
    requests++;
  }
  const renderedText = visibleText(rendered);
  const state = engine.state();
  const pruned = prunedKeysOf(state.engine.keeper, renderedText);
  const batches = prunedBatchesOf(raw, pruned);
  const prunedCalls: Record<PruneKind, number> = { stubbed: 0, aliased: 0, chain: 0, purged: 0 };
  const live = new Set(pairToolCalls(raw).calls.map((c) => c.key));
  for (const [key, kind] of pruned) if (live.has(key)) prunedCalls[kind]++;
  const renderedMessages = rendered as ContextMessage[];
  const ownContext: OwnTextContext = { state: state.engine.keeper, rendered: renderedMessages, renderedCalls: renderedCallsOf(renderedMessages) };
  const own = measureBatches(batches, (batch) => batch.calls.map((c) => ownTextOfCall(c.occurrenceKey, pruned.get(c.occurrenceKey)!, ownContext)).join("\n"));
  const shown = shownRefs(renderedText);
  const recallable = new Set(prunedCallsOf(raw, state.engine.keeper).map((c) => c.occurrenceKey));
  return {
    requests,
    flushes: state.flushes.length,
    prunedBatches: batches.length,
    prunedCalls,
    ...measureBatches(batches, renderedText),
    own,
    renderedChars: renderedText.length,
    refs: {
      shown: shown.length,
      inSummarizedBatches: shown.filter((r) => summarizedKeys.has(r)).length,
      inPrunedCalls: shown.filter((r) => recallable.has(r)).length,
      notRecallable: shown.filter((r) => !recallable.has(r)),
    },
  };
}

/** Occurrence keys offered for recall in a rendered text (`ref=<id>@<ts>#<n>`), deduplicated. */
export function shownRefs(renderedText: string): string[] {
  return [...new Set([...renderedText.matchAll(/ref=([^\s=]+@-?\d+#\d+)/g)].map((m) => m[1]!))];
}

const pct = (c: FactCount) => (c.total === 0 ? "n/a" : `${((c.visible / c.total) * 100).toFixed(1)}%`);

/** The headline: output paths named in each pruned batch's own text, with the overall figure beside it. */
export function formatHeadlineFidelity(r: FidelityReport): string {
  return (
    `output-path fidelity ${pct(r.own.byKind.outputPath)} in each batch's own stub/summary/chain (${r.own.byKind.outputPath.visible}/${r.own.byKind.outputPath.total}); ` +
    `all facts own ${pct(r.own.all)}, anywhere in the render ${pct(r.all)}`
  );
}

/** One line for logs: `fidelity 93.1% (812/872 facts; paths 90.2%, commands 99.0%) over 210 pruned batches`. */
export function formatFidelity(r: FidelityReport): string {
  const paths: FactCount = {
    total: r.byKind.argumentPath.total + r.byKind.outputPath.total,
    visible: r.byKind.argumentPath.visible + r.byKind.outputPath.visible,
  };
  return (
    `fidelity ${pct(r.all)} (${r.all.visible}/${r.all.total} facts; argument paths ${pct(r.byKind.argumentPath)}, ` +
    `output paths ${pct(r.byKind.outputPath)}, all paths ${pct(paths)}, commands ${pct(r.byKind.command)}) ` +
    `over ${r.prunedBatches} pruned batches, ${r.requests} requests, ${r.flushes} flushes`
  );
}
