/**
 * Per-request cost of the extension: everything it adds to one provider request, through the
 * host's real handlers (src/host/keeper-host.ts) on a fake Pi, beside Pi's own
 * `structuredClone` of the messages in the same run.
 *
 * - `context` handler: the engine's render (cold-cache check first, then the pruning phases,
 *   the thinking strip, the pairing sweep) over the persisted state;
 * - cold-cache check: the cache facts the render consults (timed alone as well);
 * - `before_provider_request`: the engine's send (ledger, seam placement), the per-layer
 *   fingerprints and the bust attribution over the serialized body;
 * - `message_end`: the usage observation.
 * Pi's serialization of the body is Pi's work, not the extension's: built once, outside the timing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { createKeeperHost } from "../src/host/keeper-host.ts";
import { serializeForAnthropic } from "../src/report/anthropic-wire.ts";
import { toLlmMessages } from "../src/report/pi-session-contexts.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { flushRecordEntry } from "../src/state/entries.ts";
import { FLUSH_RECORD_VERSION, type KeeperState } from "../src/state/schema.ts";

export interface RequestCost {
  context: number;
  coldCheck: number;
  beforeRequest: number;
  messageEnd: number;
  total: number;
  clone: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Medians (ms) over `samples` requests of the same context (a warm cache, steady state). */
export function measureRequestCost(o: { context: ContextMessage[]; state: KeeperState; model: { provider: string; id: string; api: string }; samples: number }): RequestCost {
  const { context, state, model } = o;
  // The state as one flush entry with a checkpoint (what a restart reads at most, besides deltas).
  const record = { version: FLUSH_RECORD_VERSION, summaries: Object.values(state.summaries), frontier: state.frontier, stats: state.stats } as const;
  const entries = [flushRecordEntry(record)].map((e, i) => ({ type: "custom", id: `k${i}`, ...e }));
  const clock = { now: 1_800_000_000_000 };
  const pi = { appendEntry: () => {}, getThinkingLevel: () => "high", getActiveTools: () => ["read", "bash"], setActiveTools: () => {} };
  const ctx = {
    cwd: mkdtempSync(join(tmpdir(), "keeper-bench-")),
    isProjectTrusted: () => false,
    hasUI: false,
    ui: { notify: () => {}, setStatus: () => {} },
    model,
    sessionManager: { getBranch: () => entries, buildSessionProjection: () => ({ messages: context }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 100_000, contextWindow: 200_000, percent: 50 }),
  } as unknown as ExtensionContext;
  const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = join(ctx.cwd, "agent");
  const host = createKeeperHost(pi as never, { now: () => clock.now });
  host.onSessionStart(ctx);
  if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = previousAgentDir;

  const first = host.onContext({ type: "context", messages: context } as never, ctx)?.messages ?? context;
  const body = serializeForAnthropic(toLlmMessages(first as never), { model });
  const answer = { role: "assistant", content: [{ type: "text", text: "ok" }], usage: { input: 5, output: 5, cacheRead: 90_000, cacheWrite: 100, totalTokens: 0, cost: {} }, stopReason: "toolUse", timestamp: 1 } as unknown as ContextMessage;
  const times: Record<keyof RequestCost, number[]> = { context: [], coldCheck: [], beforeRequest: [], messageEnd: [], total: [], clone: [] };
  let sink = 0;
  for (let i = 0; i < o.samples + 10; i++) {
    clock.now += 10_000;
    const t0 = performance.now();
    const out = host.onContext({ type: "context", messages: context } as never, ctx);
    const t1 = performance.now();
    host.onBeforeProviderRequest({ type: "before_provider_request", payload: body } as never, ctx);
    const t2 = performance.now();
    host.onMessageEnd(answer, ctx);
    const t3 = performance.now();
    const cloned = structuredClone(context);
    const t4 = performance.now();
    sink += (out?.messages.length ?? 0) + cloned.length;
    if (i < 10) continue; // warm-up
    times.context.push(t1 - t0);
    times.beforeRequest.push(t2 - t1);
    times.messageEnd.push(t3 - t2);
    times.total.push(t3 - t0);
    times.clone.push(t4 - t3);
  }
  // The cold-cache check alone: the facts the render consults before rendering.
  for (let i = 0; i < o.samples; i++) {
    const t0 = performance.now();
    sink += host.cacheFacts(ctx).requestTimes.length;
    times.coldCheck.push(performance.now() - t0);
  }
  if (sink < 0) console.log(sink);
  return { context: median(times.context), coldCheck: median(times.coldCheck), beforeRequest: median(times.beforeRequest), messageEnd: median(times.messageEnd), total: median(times.total), clone: median(times.clone) };
}
