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
import { driveKeeper } from "../test/support/host/keeper-driver.ts";
import { serializeForAnthropic } from "../src/report/anthropic-wire.ts";
import { toLlmMessages } from "../src/report/pi-session-contexts.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { flushRecordEntry } from "../src/state/entries.ts";
import { FLUSH_RECORD_VERSION, type KeeperState } from "../src/state/schema.ts";
import { withAgentDir } from "../test/support/host/agent-dir.ts";

export interface Stat {
  /** The least disturbed tenth (a shared machine's load lands in the upper ones). */
  p10: number;
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
  /** `total` split: the requests right after a flush (a changed state, a rewritten body) and the others. */
  afterFlush: Stat;
  others: Stat;
  clone: Stat;
  /** Requests timed, flushes run between them, messages at the first and last timed request. */
  requests: number;
  flushes: number;
  messages: { first: number; last: number };
}

function stat(xs: number[]): Stat {
  if (xs.length === 0) return { p10: NaN, median: NaN, p90: NaN, mean: NaN };
  const s = [...xs].sort((a, b) => a - b);
  return { p10: s[Math.floor(s.length / 10)], median: s[Math.floor(s.length / 2)], p90: s[Math.min(s.length - 1, Math.ceil(0.9 * s.length) - 1)], mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}

/** A full collection when the runtime offers one (bun: `Bun.gc`; node: `--expose-gc`). */
function collectGarbage(): void {
  const g = globalThis as { Bun?: { gc(force: boolean): void }; gc?: () => void };
  if (g.Bun) g.Bun.gc(true);
  else g.gc?.();
}

const isAssistant = (m: ContextMessage): boolean => m.role === "assistant";

export interface RequestRunnerOptions {
  session: readonly ContextMessage[];
  start: number;
  state: KeeperState;
  model: { provider: string; id: string; api: string };
  /** A full garbage collection before each request, outside the timing (the clone's garbage then never lands in a handler's timing). */
  collectBetween?: boolean;
  /** Another build of the host (a before/after comparison in one process); default this one's, driven through its event table. */
  createHost?: (pi: never, options: { now: () => number }) => RequestHost;
}

/** The handlers a request runs, by Pi event (`driveKeeper` runs each through the host's table). */
export interface RequestHost {
  onSessionStart(ctx: ExtensionContext): void;
  onContext(event: never, ctx: ExtensionContext): { messages: unknown[] } | undefined;
  onBeforeProviderRequest(event: never, ctx: ExtensionContext): unknown;
  onMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  busy(): boolean;
  cacheFacts(ctx: ExtensionContext): unknown;
}

/** One request's timings (ms); `flushed`: its answer ended the request and the flush ran (untimed). */
export interface RequestSample {
  context: number;
  beforeRequest: number;
  messageEnd: number;
  total: number;
  clone: number;
  messages: number;
  flushed: boolean;
  /** The request right after a flush: its state changed since the request before. */
  afterFlush: boolean;
}

/**
 * The requests of `session` from message `start` on, one per `step()` (each assistant message is
 * the answer to the request made of everything before it); `state` is the persisted state of
 * `session.slice(0, start)`. `step()` resolves undefined when the session is used up.
 */
export function createRequestRunner(o: RequestRunnerOptions): { step(): Promise<RequestSample | undefined>; coldCheck(): number } {
  const { session, state, model } = o;
  const raw: ContextMessage[] = session.slice(0, o.start);
  // The state as one flush entry with a checkpoint (what flushes write; a restart reads at most that besides deltas).
  const record = { version: FLUSH_RECORD_VERSION, summaries: Object.values(state.summaries), frontier: state.frontier, stats: state.stats } as const;
  const entries: unknown[] = [flushRecordEntry(record)].map((e, i) => ({ type: "custom", id: `k${i}`, ...e }));
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
  const host: RequestHost = (o.createHost ?? ((p, options) => driveKeeper(p, options)))(pi as never, { now: () => clock.now });
  withAgentDir(join(ctx.cwd, "agent"), () => host.onSessionStart(ctx));
  let next = o.start;
  let flushedBefore = false;

  return {
    async step() {
      // The request: everything before the next answer.
      while (next < session.length && !isAssistant(session[next])) raw.push(session[next++]);
      if (next >= session.length) return undefined;
      const answer = { ...session[next++], usage: { input: 5, output: 5, cacheRead: 90_000, cacheWrite: 100, totalTokens: 0, cost: {} } } as unknown as ContextMessage;
      clock.now += 10_000;
      if (o.collectBetween) collectGarbage();
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
      const flushed = host.busy();
      while (host.busy()) await new Promise((r) => setTimeout(r, 0));
      const afterFlush = flushedBefore;
      flushedBefore = flushed;
      return { context: t1 - t0, beforeRequest: t3 - t2, messageEnd: t4 - t3, total: t1 - t0 + (t4 - t2), clone: c1 - c0, messages: messages.length, flushed, afterFlush };
    },
    coldCheck() {
      const t0 = performance.now();
      host.cacheFacts(ctx);
      return performance.now() - t0;
    },
  };
}

/** Runs `warmup` untimed requests, then up to `samples` timed ones. */
export async function measureRequestCost(o: RequestRunnerOptions & { samples: number; warmup: number }): Promise<RequestCost> {
  const runner = createRequestRunner(o);
  const samples: RequestSample[] = [];
  for (let request = 0; request < o.warmup + o.samples; request++) {
    const sample = await runner.step();
    if (!sample) break;
    if (request >= o.warmup) samples.push(sample);
  }
  const coldChecks = Array.from({ length: o.samples }, () => runner.coldCheck());
  return {
    context: stat(samples.map((s) => s.context)),
    coldCheck: stat(coldChecks),
    beforeRequest: stat(samples.map((s) => s.beforeRequest)),
    messageEnd: stat(samples.map((s) => s.messageEnd)),
    total: stat(samples.map((s) => s.total)),
    afterFlush: stat(samples.filter((s) => s.afterFlush).map((s) => s.total)),
    others: stat(samples.filter((s) => !s.afterFlush).map((s) => s.total)),
    clone: stat(samples.map((s) => s.clone)),
    requests: samples.length,
    flushes: samples.filter((s) => s.flushed).length,
    messages: { first: samples[0]?.messages ?? 0, last: samples[samples.length - 1]?.messages ?? 0 },
  };
}
