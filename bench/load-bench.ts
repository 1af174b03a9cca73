/**
 * Load bench (issue #14): a 5,000-message Pi session with 2,000 pruned originals, built
 * flush by flush through the engine's `step` as the extension drives it (flush-begin
 * → extractive summaries → flush-plan: plan, recall index with spills, custom entries) and
 * written by Pi's own SessionManager. It then measures what a user pays at that size:
 *
 * - restart: Pi opening the file, and the keeper's restore on top (state, torn-flush check,
 *   recall index, drop of what left the context);
 * - memory held by the recall index (heap after a GC, and its JSON size);
 * - per-request overhead: the `context` render over the whole context, cold (first render of a
 *   new state) and warm (every later request until the next flush);
 * - a `keeper_recall` by ref, through the index and through the branch fallback;
 * - one flush's planning at that size, and the spill files kept beside the session.
 *
 * Not a test: prints a table. Run: `npm run bench:load` (or `bun run bench/load-bench.ts`).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { effectOf, initialEngineState, keeperRender, pruneConfigFrom, step } from "../src/engine/index.ts";
import { chainCompress } from "../src/prune/chain-compress.ts";
import { errorPurge } from "../src/prune/error-purge.ts";
import { pairingSweep } from "../src/prune/pairing-sweep.ts";
import { stubReplace } from "../src/prune/stub-replace.ts";
import { liveOccurrenceKeys } from "../src/prune/occurrence.ts";
import { restoreRecallIndex } from "../src/recall/recall-entries.ts";
import { emptyRecallIndex, writeSpills } from "../src/recall/recall-index.ts";
import { executeRecall } from "../src/recall/tool.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { DEFAULT_SETTINGS } from "../src/settings/parse.ts";
import type { KeeperSettings } from "../src/settings/schema.ts";
import { dropStateOutsideContext } from "../src/state/drop-outside-context.ts";
import { CUSTOM_TYPE_FLUSH, emptyState } from "../src/state/schema.ts";
import { restoreReconciled } from "../src/state/torn-flush.ts";
import { summarizeExtractively } from "../src/summarize/extractive.ts";
import { spillPathFor, writeSpillFile } from "../src/host/spill-files.ts";

const PROMPTS = 500;
const CALLS_PER_PROMPT = 4; // 500 × (user + 4 × (call + result) + answer) = 5,000 messages, 2,000 outputs
const SETTINGS: KeeperSettings = { ...DEFAULT_SETTINGS, summarizer: { ...DEFAULT_SETTINGS.summarizer, mode: "extractive" } };
const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const USAGE = { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** Source-like output of about `chars` characters; every 100th call returns 100 KB (spilled). */
function output(seed: number): string {
  const chars = seed % 100 === 0 ? 100_000 : 1_500 + ((seed * 7919) % 14_000);
  const lines: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    const line = `${(seed * 104729 + i * 31) % 100000}: export function f${i}(x: number) { return x * ${seed}; }`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n");
}

function assistantMessage(content: unknown[], timestamp: number, stopReason: string) {
  return { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: USAGE, stopReason, timestamp };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function time<T>(runs: number, f: () => T): { ms: number; value: T } {
  const samples: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    Bun.gc(true); // a collection of the big session must not land inside a sample
    const t = performance.now();
    value = f();
    samples.push(performance.now() - t);
  }
  return { ms: median(samples), value };
}
async function timeAsync<T>(runs: number, f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const samples: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    Bun.gc(true);
    const t = performance.now();
    value = await f();
    samples.push(performance.now() - t);
  }
  return { ms: median(samples), value };
}
const heap = () => {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
};
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const dir = mkdtempSync(join(tmpdir(), "keeper-load-"));
try {
  // Build the session flush by flush, as the extension would (request-end flush after each prompt).
  const sm = SessionManager.create(join(dir, "project"), join(dir, "sessions"));
  let state = emptyState();
  let recall = emptyRecallIndex();
  let t = 1_750_000_000_000;
  let seed = 1;
  let lastFlushMs = 0;
  const buildStart = performance.now();
  for (let p = 0; p < PROMPTS; p++) {
    sm.appendMessage({ role: "user", content: [{ type: "text", text: `Task ${p}: look into module ${p}.` }], timestamp: t++ } as never);
    for (let c = 0; c < CALLS_PER_PROMPT; c++, seed++) {
      const id = `toolu_${String(seed).padStart(6, "0")}`;
      sm.appendMessage(assistantMessage([{ type: "toolCall", id, name: "read", arguments: { path: `src/m${seed}.ts` } }], t++, "toolUse") as never);
      sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: output(seed) }], isError: false, timestamp: t++ } as never);
    }
    sm.appendMessage(assistantMessage([{ type: "text", text: `Done with task ${p}.` }], t++, "stop") as never);
    const flushStart = performance.now();
    const branchMessages = sm.buildSessionProjection().messages as ContextMessage[];
    const inputs = { settings: SETTINGS, model: MODEL, branchMessages };
    const begun = step(initialEngineState({ keeper: state, recall }), { type: "flush-begin", ...inputs });
    const { capture } = effectOf(begun, "summarize");
    const planned = step(begun.state, {
      type: "flush-plan",
      ...inputs,
      summaries: capture.batches.map((b) => summarizeExtractively(b)),
      now: t,
      facts: undefined,
      label: "load bench",
      recall: { spill: { thresholdBytes: SETTINGS.recall.spillThresholdBytes, pathFor: (_c, sha) => spillPathFor(sm.getSessionFile()!, sha) } },
    });
    const { result } = effectOf(planned, "write-spills");
    const spilled = await writeSpills(result.spills, writeSpillFile);
    if (spilled.failed.length) throw new Error(`spill failed: ${spilled.failed[0]!.error}`);
    for (const e of result.entries) sm.appendCustomEntry(e.customType, e.data);
    recall = result.nextRecall ?? recall;
    state = result.nextState;
    lastFlushMs = performance.now() - flushStart;
  }
  const buildMs = performance.now() - buildStart;
  const file = sm.getSessionFile()!;
  const context = sm.buildSessionProjection().messages as ContextMessage[];
  const pruned = Object.keys(recall.entries).length;

  // Restart: Pi opens the file; the keeper restores on top.
  const open = time(3, () => SessionManager.open(file, join(dir, "sessions")));
  const reopened = open.value;
  const restore = time(5, () => {
    const branch = reopened.getBranch() as unknown[];
    const restored = restoreReconciled(branch);
    const index = restoreRecallIndex(branch);
    const live = liveOccurrenceKeys(reopened.buildSessionProjection().messages as ContextMessage[]);
    return { state: dropStateOutsideContext(restored.state, live), index: index.index, diagnostics: [...restored.diagnostics, ...index.diagnostics] };
  });
  if (restore.value.diagnostics.length) throw new Error(`restore diagnostics: ${restore.value.diagnostics[0]}`);
  // The slowest point to restart at: the end of the longest delta chain (just before a checkpoint).
  const branchAll = reopened.getBranch() as Array<{ type: string; customType?: string; data?: { frontier?: unknown; frontierDelta?: unknown } }>;
  const flushAt = branchAll.flatMap((e, i) => (e.type === "custom" && e.customType === CUSTOM_TYPE_FLUSH ? [{ i, checkpoint: e.data?.frontier !== undefined }] : []));
  const chains = flushAt.reduce<Array<{ end: number; deltas: number }>>((acc, f) => {
    if (f.checkpoint) acc.push({ end: f.i, deltas: 0 });
    else if (acc.length) acc.at(-1)!.deltas++;
    return acc;
  }, []);
  const longest = chains.slice(0, -1).reduce((a, c) => (c.deltas > a.deltas ? c : a), chains.at(-1)!);
  const nextCheckpoint = flushAt.find((f) => f.checkpoint && f.i > longest.end)?.i ?? branchAll.length;
  const prefix = branchAll.slice(0, nextCheckpoint);
  const restoreLongest = time(5, () => restoreReconciled(prefix));

  // Memory held by the recall index.
  const branchEntries = reopened.getBranch() as unknown[];
  const before = heap();
  const held = restoreRecallIndex(branchEntries).index;
  const indexHeap = heap() - before;
  const indexJson = JSON.stringify(held).length;

  // Per-request overhead: render cold (a new state object: first request after a flush) and warm.
  const fresh = Array.from({ length: 11 }, () => structuredClone(restore.value.state));
  const cold = time(11, () => keeperRender({ messages: context, state: fresh.pop()!, settings: SETTINGS, model: MODEL }));
  const warmState = restore.value.state;
  keeperRender({ messages: context, state: warmState, settings: SETTINGS, model: MODEL });
  const warm = time(21, () => keeperRender({ messages: context, state: warmState, settings: SETTINGS, model: MODEL }));
  const stubbedInRender = cold.value.filter((m, i) => m !== context[i]).length;
  // Where a warm render's time goes, phase by phase (each phase on its real input).
  const phaseCtx = { state: warmState, config: pruneConfigFrom(SETTINGS) };
  const phases: [string, number][] = [];
  let input = context;
  for (const [name, phase] of [["stub-replace", stubReplace], ["error-purge", errorPurge], ["chain-compress", chainCompress], ["pairing-sweep", pairingSweep]] as const) {
    const run = time(11, () => phase(input, phaseCtx));
    phases.push([name, run.ms]);
    input = run.value;
  }

  // keeper_recall by ref: through the index (branch scan + sha256), and the branch fallback (no index).
  const rawBranch = reopened.getBranch().filter((e) => e.type === "message").map((e) => (e as { message: ContextMessage }).message);
  const refs = Object.keys(held.entries);
  const ref = refs[Math.floor(refs.length / 2)]!;
  const viaIndex = await timeAsync(11, () => executeRecall({ params: { ref }, store: held, branchMessages: rawBranch }));
  const viaBranch = await timeAsync(11, () => executeRecall({ params: { ref }, store: emptyRecallIndex(), branchMessages: rawBranch }));
  if (viaIndex.value.isError || viaBranch.value.isError) throw new Error("recall failed");

  // What the keeper's own entries weigh in the session file (a flush entry carries a frontier delta, or a full checkpoint when due).
  const bytesByType = new Map<string, { count: number; bytes: number; last: number }>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.includes('"type":"custom"')) continue;
    const entry = JSON.parse(line) as { customType: string; data: { frontier?: unknown } };
    const type = entry.customType === CUSTOM_TYPE_FLUSH ? `${entry.customType} (${entry.data.frontier ? "checkpoint" : "delta"})` : entry.customType;
    const row = bytesByType.get(type) ?? { count: 0, bytes: 0, last: 0 };
    bytesByType.set(type, { count: row.count + 1, bytes: row.bytes + line.length, last: line.length });
  }

  // Spill files kept beside the session.
  const spillDir = `${file}.keeper`;
  const spillFiles = readdirSync(spillDir);
  const spillBytes = spillFiles.reduce((n, f) => n + statSync(join(spillDir, f)).size, 0);

  const rows: [string, string][] = [
    ["session", `${context.length} messages, ${pruned} pruned originals (${warmState.frontier.stubbedKeys.length} stubbed, ${Object.keys(warmState.frontier.aliases).length} aliased, ${warmState.frontier.compressedChains.length} chains), file ${mb(statSync(file).size)}`],
    ["built in", `${(buildMs / 1000).toFixed(1)} s (${PROMPTS} flushes; the last one ${lastFlushMs.toFixed(0)} ms: capture + plan + index at ${context.length} messages)`],
    ["restart: Pi opens the file", `${open.ms.toFixed(0)} ms`],
    ["restart: keeper restore", `${restore.ms.toFixed(0)} ms (state + torn check + recall index + drop outside context)`],
    ["restart: keeper state, longest chain", `${restoreLongest.ms.toFixed(0)} ms (state + torn check at the end of the longest delta chain: a checkpoint + ${longest.deltas} deltas)`],
    ["recall index in memory", `${mb(indexHeap)} heap, ${mb(indexJson)} as JSON (${pruned} entries)`],
    ["render per request, warm", `${warm.ms.toFixed(1)} ms (same state: every request between flushes)`],
    ["render per request, cold", `${cold.ms.toFixed(1)} ms (first request after a flush; ${stubbedInRender} messages replaced)`],
    ["warm render by phase", phases.map(([n, ms]) => `${n} ${ms.toFixed(1)} ms`).join(", ")],
    ["keeper_recall via index", `${viaIndex.ms.toFixed(1)} ms`],
    ["keeper_recall via branch fallback", `${viaBranch.ms.toFixed(1)} ms`],
    ...[...bytesByType].map(([type, r]): [string, string] => [`entries ${type}`, `${r.count} entries, ${mb(r.bytes)} in all, the last one ${(r.last / 1024).toFixed(1)} KB`]),
    ["spill files", `${spillFiles.length} files, ${mb(spillBytes)} (outputs ≥ ${SETTINGS.recall.spillThresholdBytes} bytes; one per distinct content)`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`load bench (bun ${Bun.version}, ${process.platform}/${process.arch}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)})`);
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
