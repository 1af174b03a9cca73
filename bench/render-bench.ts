/**
 * Render bench: time of the keeper's `context` handler pipeline (`renderForRequest`: stub-replace,
 * error-purge, chain-compress, thinking strip, pairing sweep) per request at 100, 1k and 5k
 * messages, beside a copy-only baseline (`structuredClone` of the messages) measured in the same
 * run. Sessions are generated; the persisted state is the real one after flushes at request ends
 * (size-model summaries). Then everything the extension adds to one request (request-cost.ts:
 * the host's `context`, cold-cache check, `before_provider_request` and `message_end`
 * handlers) at 1k and 5k messages. Not a test: prints tables. Run: `npm run bench`.
 */
import { renderForRequest } from "../src/report/keeper-engine.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { CONFIG, generateSession, INFO, stateAfterFlushes } from "./bench-session.ts";
import { measureRequestCost } from "./request-cost.ts";

const SIZES = [100, 1_000, 5_000];

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
const costRows: string[][] = [["messages", "requests", "flushes", "context", "cold check", "before_request", "message_end", "adds (p10)", "adds (median)", "adds (p90)", "adds (mean)", "after a flush (median)", "others (median)", "clone (p10)", "clone (median)", "adds / clone (median)"]];
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
    fmt(c.total.p10),
    fmt(c.total.median),
    fmt(c.total.p90),
    fmt(c.total.mean),
    fmt(c.afterFlush.median),
    fmt(c.others.median),
    fmt(c.clone.p10),
    fmt(c.clone.median),
    `${(c.total.median / c.clone.median).toFixed(2)}×`,
  ]);
  console.log(`adds ${c.total.median.toFixed(2)} ms per request at ${size} messages (median; p10 ${c.total.p10.toFixed(2)} ms, mean ${c.total.mean.toFixed(2)} ms; right after a flush ${c.afterFlush.median.toFixed(2)} ms, others ${c.others.median.toFixed(2)} ms; Pi's structuredClone: ${c.clone.median.toFixed(2)} ms)`);
}
const costWidths = costRows[0].map((_, i) => Math.max(...costRows.map((r) => r[i].length)));
for (const [i, r] of costRows.entries()) {
  console.log(r.map((c, j) => (j === 0 ? c.padEnd(costWidths[j]) : c.padStart(costWidths[j]))).join("  "));
  if (i === 0) console.log(costWidths.map((w) => "-".repeat(w)).join("  "));
}
console.log("adds: the host's context + before_provider_request + message_end handlers per request (fresh clone and payload each, seam on); handler columns are medians; after a flush: the request right after each flush (a changed state), others: the rest.");
