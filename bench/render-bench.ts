/**
 * Render bench: time of the keeper's `context` handler pipeline (`renderForRequest`: stub-replace,
 * error-purge, chain-compress, thinking strip, pairing sweep) per request at 100, 1k and 5k
 * messages, beside a copy-only baseline (`structuredClone` of the messages) measured in the same
 * run. Sessions are generated; the persisted state is the real one after flushes at request ends
 * (size-model summaries). Then everything the extension adds to one request (request-cost.ts:
 * the host's `context`, cold-cache check, `before_provider_request` and `message_end`
 * handlers) at 1k and 5k messages. Not a test: prints tables. Run: `npm run bench`.
 */
import { captureBatches } from "../src/flush/capture.ts";
import { planFlush } from "../src/flush/plan.ts";
import { keeperReplayConfig } from "../src/report/keeper-config.ts";
import { renderForRequest, type KeeperRequestInfo } from "../src/report/keeper-engine.ts";
import { sizeModelSummarizer } from "../src/report/replay-summaries.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { emptyState, type KeeperState } from "../src/state/schema.ts";
import { measureRequestCost } from "./request-cost.ts";
import { computeThinkingBoundary } from "../src/thinking/index.ts";

const SIZES = [100, 1_000, 5_000];
/** Opus 4.5 keeps all thinking, so `auto` strips and every phase runs. */
const INFO: KeeperRequestInfo = { timestamp: 0, provider: "anthropic", api: "anthropic-messages", model: "claude-opus-4-5" };
const CONFIG = keeperReplayConfig();
const usage = { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** Deterministic text of about `chars` characters (a file listing / source-like output). */
function output(seed: number, chars: number): string {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    const line = `${(seed * 7919 + i * 104729) % 100000}: export function f${i}(x: number) { return x * ${seed}; }`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n");
}

/** A session of `count` messages: prompts with 3-call tool loops (every 7th call fails), thinking on. */
function generateSession(count: number): { messages: ContextMessage[]; requestEnds: number[] } {
  const messages: ContextMessage[] = [];
  const requestEnds: number[] = [];
  let t = 1_700_000_000_000;
  let call = 0;
  for (let p = 0; messages.length < count; p++) {
    messages.push({ role: "user", content: [{ type: "text", text: `prompt ${p}: change module ${p % 40}` }], timestamp: (t += 1000) } as ContextMessage);
    for (let c = 0; c < 3 && messages.length < count - 1; c++, call++) {
      const id = `toolu_${call}`;
      const path = `src/module-${p % 40}/file-${c}.ts`;
      messages.push({
        role: "assistant",
        content: [
          { type: "thinking", thinking: `I should look at ${path} next. `.repeat(12), thinkingSignature: `sig${call}` },
          { type: "toolCall", id, name: c === 2 ? "bash" : "read", arguments: c === 2 ? { command: `npm test -- ${path}` } : { path } },
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model: INFO.model,
        usage,
        stopReason: "toolUse",
        timestamp: (t += 2000),
      } as ContextMessage);
      const failed = call % 7 === 6;
      messages.push({
        role: "toolResult",
        toolCallId: id,
        toolName: c === 2 ? "bash" : "read",
        content: [{ type: "text", text: failed ? `Error: ENOENT ${path}` : output(call, 2500 + (call % 5) * 900) }],
        isError: failed,
        timestamp: (t += 500),
      } as ContextMessage);
    }
    if (messages.length >= count) break;
    messages.push({
      role: "assistant",
      content: [{ type: "thinking", thinking: "Summing up. ".repeat(10), thinkingSignature: `sigf${p}` }, { type: "text", text: `Done with prompt ${p}.` }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: INFO.model,
      usage,
      stopReason: "stop",
      timestamp: (t += 2000),
    } as ContextMessage);
    requestEnds.push(messages.length);
  }
  return { messages: messages.slice(0, count), requestEnds: requestEnds.filter((e) => e <= count) };
}

/** The persisted state after flushing at request ends (every `stride`-th, plus the last). */
function stateAfterFlushes(messages: ContextMessage[], requestEnds: number[], stride: number): KeeperState {
  const summarize = sizeModelSummarizer();
  let state = emptyState();
  const keep = CONFIG.thinking.keepLastTurns;
  requestEnds.forEach((end, i) => {
    if (i % stride !== stride - 1 && i !== requestEnds.length - 1) return;
    const branch = messages.slice(0, end);
    const { batches } = captureBatches({ branchMessages: branch, state, config: CONFIG.prune });
    state = planFlush({
      state,
      branchMessages: branch,
      summaries: batches.map((b) => summarize(b).summary),
      config: CONFIG.prune,
      now: i,
      thinkingBoundary: (x) => computeThinkingBoundary(x.assistantTimestamps, keep, x.previous),
    }).nextState;
  });
  return state;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function time(samples: number, f: () => unknown): { median: number; p99: number } {
  for (let i = 0; i < Math.min(20, samples); i++) f(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    f();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const rows: string[][] = [["messages", "state", "render median", "render p99", "clone median", "clone p99", "render / clone (median)"]];
for (const size of SIZES) {
  const { messages, requestEnds } = generateSession(size);
  const state = stateAfterFlushes(messages, requestEnds, size > 2000 ? 5 : 1);
  // The request about to go out: a new prompt after the history.
  const context = [...messages, { role: "user", content: [{ type: "text", text: "next prompt" }], timestamp: Number.MAX_SAFE_INTEGER } as ContextMessage];
  const samples = size >= 5000 ? 100 : 300;
  let sink = 0;
  const render = time(samples, () => (sink += renderForRequest(context, state, CONFIG, INFO).length));
  const clone = time(samples, () => (sink += structuredClone(context).length));
  const f = state.frontier;
  rows.push([
    String(size),
    `${f.flushSeq} flushes, ${f.stubbedKeys.length} stubs, ${f.compressedChains.length} chains, ${f.purgedErrorKeys.length} purged`,
    fmt(render.median),
    fmt(render.p99),
    fmt(clone.median),
    fmt(clone.p99),
    `${(render.median / clone.median).toFixed(2)}×`,
  ]);
  if (sink < 0) console.log(sink);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const [i, r] of rows.entries()) {
  console.log(r.map((c, j) => (j === 0 || j === 1 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join("  "));
  if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
}
console.log("render: the keeper's `context` pipeline over a persisted state; clone: structuredClone of the same messages.");

// Everything the extension adds to one request (bench/request-cost.ts), beside Pi's clone: a
// growing session (2 messages per request, a request-end flush every 4th), fresh clones and
// payloads; the timed requests are centred on the size named.
console.log("");
const costRows: string[][] = [["messages", "requests", "flushes", "context", "cold check", "before_request", "message_end", "adds (median)", "adds (p90)", "adds (mean)", "Pi's clone", "adds / clone"]];
for (const size of [1_000, 5_000]) {
  const samples = size >= 5000 ? 60 : 200;
  const warmup = 10;
  const start = size - samples; // ~2 messages per request: the timed ones span size ± samples
  const { messages: session, requestEnds } = generateSession(start + 2 * (samples + warmup) + 20);
  const state = stateAfterFlushes(session.slice(0, start), requestEnds.filter((e) => e <= start), size > 2000 ? 5 : 1);
  const c = await measureRequestCost({ session, start, state, model: { provider: INFO.provider, id: INFO.model, api: INFO.api }, samples, warmup });
  costRows.push([
    `${c.messages.first}–${c.messages.last}`,
    String(c.requests),
    String(c.flushes),
    fmt(c.context.median),
    fmt(c.coldCheck.median),
    fmt(c.beforeRequest.median),
    fmt(c.messageEnd.median),
    fmt(c.total.median),
    fmt(c.total.p90),
    fmt(c.total.mean),
    fmt(c.clone.median),
    `${(c.total.median / c.clone.median).toFixed(2)}×`,
  ]);
  console.log(`adds ${c.total.median.toFixed(2)} ms per request at ${size} messages (median; mean ${c.total.mean.toFixed(2)} ms; Pi's structuredClone: ${c.clone.median.toFixed(2)} ms)`);
}
const costWidths = costRows[0].map((_, i) => Math.max(...costRows.map((r) => r[i].length)));
for (const [i, r] of costRows.entries()) {
  console.log(r.map((c, j) => (j === 0 ? c.padEnd(costWidths[j]) : c.padStart(costWidths[j]))).join("  "));
  if (i === 0) console.log(costWidths.map((w) => "-".repeat(w)).join("  "));
}
console.log("adds: the host's context + before_provider_request + message_end handlers per request (fresh clone and payload each, seam on); handler columns are medians.");
