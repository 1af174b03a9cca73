/**
 * The benches' generated session: prompts with 3-call tool loops (every 7th call fails),
 * thinking on, and the persisted state after flushes at request ends (size-model summaries).
 */
import { captureBatches } from "../src/flush/capture.ts";
import { planFlush } from "../src/flush/plan.ts";
import { keeperReplayConfig } from "../src/report/keeper-config.ts";
import type { KeeperRequestInfo } from "../src/report/keeper-engine.ts";
import { sizeModelSummarizer } from "../src/report/replay-summaries.ts";
import type { ContextMessage } from "../src/session/messages.ts";
import { emptyState, type KeeperState } from "../src/state/schema.ts";
import { computeThinkingBoundary } from "../src/thinking/index.ts";

/** Opus 4.5 keeps all thinking, so `auto` strips and every phase runs. */
export const INFO: KeeperRequestInfo = { timestamp: 0, provider: "anthropic", api: "anthropic-messages", model: "claude-opus-4-5" };
export const CONFIG = keeperReplayConfig();
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
export function generateSession(count: number): { messages: ContextMessage[]; requestEnds: number[] } {
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
export function stateAfterFlushes(messages: ContextMessage[], requestEnds: number[], stride: number): KeeperState {
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
