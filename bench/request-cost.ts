/**
 * Per-request cost of the extension: everything it adds to one provider request, through the
 * host's real handlers (src/host/keeper-host.ts) on a fake Pi, beside Pi's own
 * `structuredClone` of the messages in the same run.
 *
 * Each request is a new one, as Pi makes it: the session grows by the answer and its tool
 * result (or the next prompt), Pi's `structuredClone` of the messages is what the `context`
 * handler gets (fresh objects every time), and the provider payload is serialized anew from
 * what the handler returned — both outside the timed handlers. An answer that ends a request
 * (`stopReason: "stop"`) runs the host's real request-end flush (extractive summaries, gate,
 * entries appended), awaited outside the timing; the request after it renders a changed state.
 *
 * - `context` handler: the engine's render (cold-cache check first, then the pruning phases,
 *   the thinking strip, the pairing sweep) over the persisted state;
 * - cold-cache check: the cache facts the render consults (timed alone as well);
 * - `before_provider_request`: the engine's send (ledger, seam placement), the per-layer
 *   fingerprints and the bust attribution over the serialized body;
 * - `message_end`: the usage observation (the flush it may start runs later, untimed).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { createKeeperHost } from "../src/host/keeper-host.ts";
import { serializeForAnthropic } from "../src/report/anthropic-wire.ts";
import { toLlmMessages } from "../src/report/pi-session-contexts.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { frontierEntry, statsEntry, summaryEntry } from "../src/state/entries.ts";
import type { KeeperState } from "../src/state/schema.ts";

export interface Stat {
  median: number;
  p90: number;
  mean: number;
}

export interface RequestCost {
  context: Stat;
  coldCheck: Stat;
  beforeRequest: Stat;
  messageEnd: Stat;
  total: Stat;
  clone: Stat;
  /** Requests timed, flushes run between them, messages at the first and last timed request. */
  requests: number;
  flushes: number;
  messages: { first: number; last: number };
}

function stat(xs: number[]): Stat {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.min(s.length - 1, Math.ceil(0.9 * s.length) - 1)], mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}

const isAssistant = (m: ContextMessage): boolean => m.role === "assistant";

/**
 * Runs the requests of `session` from message `start` on (each assistant message is the answer
 * to the request made of everything before it), the first `warmup` untimed, then up to
 * `samples` timed. `state` is the persisted state of `session.slice(0, start)`.
 */
export async function measureRequestCost(o: {
  session: readonly ContextMessage[];
  start: number;
  state: KeeperState;
  model: { provider: string; id: string; api: string };
  samples: number;
  warmup: number;
}): Promise<RequestCost> {
  const { session, state, model } = o;
  const raw: ContextMessage[] = session.slice(0, o.start);
  const entries: unknown[] = [frontierEntry(state.frontier), statsEntry(state.stats), ...Object.values(state.summaries).map(summaryEntry)].map((e, i) => ({ type: "custom", id: `k${i}`, ...e }));
  const branch = () => [...raw.map((message, i) => ({ type: "message", id: `m${i}`, message })), ...entries];
  const clock = { now: 1_800_000_000_000 };
  const pi = {
    appendEntry: (customType: string, data: unknown) => entries.push({ type: "custom", id: `k${entries.length}`, customType, data }),
    getThinkingLevel: () => "high",
    getActiveTools: () => ["read", "bash"],
    setActiveTools: () => {},
  };
  const ctx = {
    cwd: mkdtempSync(join(tmpdir(), "keeper-bench-")),
    isProjectTrusted: () => false,
    hasUI: false,
    ui: { notify: () => {}, setStatus: () => {} },
    model,
    sessionManager: { getBranch: branch, buildSessionProjection: () => ({ messages: raw }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 100_000, contextWindow: 200_000, percent: 50 }),
  } as unknown as ExtensionContext;
  const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = join(ctx.cwd, "agent");
  const host = createKeeperHost(pi as never, { now: () => clock.now });
  host.onSessionStart(ctx);
  if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = previousAgentDir;

  const times: Record<"context" | "coldCheck" | "beforeRequest" | "messageEnd" | "total" | "clone", number[]> = { context: [], coldCheck: [], beforeRequest: [], messageEnd: [], total: [], clone: [] };
  let sink = 0;
  let flushes = 0;
  let next = o.start;
  const sizes: number[] = [];
  for (let request = 0; request < o.warmup + o.samples && next < session.length; request++) {
    // The request: everything before the next answer.
    while (next < session.length && !isAssistant(session[next])) raw.push(session[next++]);
    if (next >= session.length) break;
    const answer = { ...session[next++], usage: { input: 5, output: 5, cacheRead: 90_000, cacheWrite: 100, totalTokens: 0, cost: {} } } as unknown as ContextMessage;
    clock.now += 10_000;
    const c0 = performance.now();
    const messages = structuredClone(raw); // Pi's copy (runner.js) — the baseline, not the extension's
    const c1 = performance.now();
    const t0 = performance.now();
    const out = host.onContext({ type: "context", messages } as never, ctx);
    const t1 = performance.now();
    const payload = serializeForAnthropic(toLlmMessages((out?.messages ?? messages) as never), { model }); // Pi's work
    const t2 = performance.now();
    host.onBeforeProviderRequest({ type: "before_provider_request", payload } as never, ctx);
    const t3 = performance.now();
    host.onMessageEnd(answer, ctx);
    const t4 = performance.now();
    raw.push(answer);
    sink += (out?.messages.length ?? 0) + payload.messages.length;
    const flushing = host.busy();
    if (flushing) {
      while (host.busy()) await new Promise((r) => setTimeout(r, 0));
      if (request >= o.warmup) flushes++;
    }
    if (request < o.warmup) continue;
    sizes.push(messages.length);
    times.context.push(t1 - t0);
    times.beforeRequest.push(t3 - t2);
    times.messageEnd.push(t4 - t3);
    times.total.push(t1 - t0 + (t4 - t2));
    times.clone.push(c1 - c0);
  }
  // The cold-cache check alone: the facts the render consults before rendering.
  for (let i = 0; i < o.samples; i++) {
    const t0 = performance.now();
    sink += host.cacheFacts(ctx).requestTimes.length;
    times.coldCheck.push(performance.now() - t0);
  }
  if (sink < 0) console.log(sink);
  return {
    context: stat(times.context),
    coldCheck: stat(times.coldCheck),
    beforeRequest: stat(times.beforeRequest),
    messageEnd: stat(times.messageEnd),
    total: stat(times.total),
    clone: stat(times.clone),
    requests: times.total.length,
    flushes,
    messages: { first: sizes[0] ?? 0, last: sizes[sizes.length - 1] ?? 0 },
  };
}
