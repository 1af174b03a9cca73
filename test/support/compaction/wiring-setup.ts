/** Shared setup for the wiring tests: a session of a few turns on a FakeHost, and a job start. */
import { expect } from "bun:test";
import { FakeHost, flush as flushMicrotasks, scriptedAdapter } from "./fake-pi.ts";
import { type BuildOp, SessionBuilder } from "./session-builder.ts";

export const TURN: BuildOp[] = [
  { op: "user", chars: 400 },
  { op: "tool_loop", tool: "read", path: "src/a.ts", resultChars: 4000 },
  { op: "reply", chars: 600 },
];

export function setup(opts: { turns?: number; contextWindow?: number; timeoutMs?: number; stallMs?: number } = {}) {
  const builder = new SessionBuilder();
  for (let i = 0; i < (opts.turns ?? 6); i++) builder.applyAll(TURN);
  const scripted = scriptedAdapter();
  const host = new FakeHost({ sm: builder.sm, adapter: scripted.adapter, contextWindow: opts.contextWindow, timeoutMs: opts.timeoutMs, stallMs: opts.stallMs });
  return { host, builder, ...scripted };
}

/** Pi's threshold in these setups (window 100k − reserve 10k): from here on a ready summary is due (`apply-need.ts`). */
export const THRESHOLD_TOKENS = 90_000;

/** The context grew to Pi's threshold: a ready summary applies at the next boundary. */
export function atThreshold(host: FakeHost): void {
  host.tokens = THRESHOLD_TOKENS;
}

/**
 * A summary ready while messages are queued, persisted at agent_end; then a new process on the
 * same session (`again`, not started yet).
 */
export async function readyAcrossRestart(): Promise<ReturnType<typeof setup> & { again: FakeHost }> {
  const s = setup();
  await startJob(s.host);
  s.host.pendingMessages = true;
  s.finish(0);
  await flushMicrotasks();
  await s.host.fire("agent_end", { messages: [] });
  return { ...s, again: new FakeHost({ sm: s.host.sm, adapter: scriptedAdapter().adapter }) };
}

/** Drive a turn_end while busy with usage inside the start window, so a job starts. */
export async function startJob(host: FakeHost) {
  host.idle = false;
  host.tokens = 60_000; // window 100k, ratio 0.5 -> lower 50k, upper 100k - 10k = 90k
  await host.turnEnd();
  expect(host.state().kind).toBe("pending");
}
