/**
 * How many more requests a running tool loop will make: the N the gate prices a rewrite inside
 * that loop with (a stub made inside a loop is read by the loop's later requests; at its final
 * answer the loop's chain collapses, so with chain compression at `rollingWindow` 0 that is all
 * it is read by).
 *
 * Estimator (pure; documented in doc/cache-discipline.md):
 * - Lindy, read conservatively: a loop that has run k tool steps goes on past k + x with chance
 *   k / (k + x); two loops in three go on at least k/2 more (`LINDY_SHARE`), taken as the prior.
 *   A rewrite is a sure cost and its saving scales with the steps still to come: the median (k
 *   more) fired rewrites at the last step of short loops on the wire benchmark.
 * - The session's finished loops (the earlier prompts' loops on the branch): one that ran L ≥ k
 *   steps says such a loop went on L − k more; one that ended before k says loops here end
 *   around now (it counts as 0 more).
 * - Blend, the prior counted as one loop:
 *   remaining = (Σ_{L ≥ k} (L − k) + k/2) / (#past loops + 1), capped at `cap` (the gate's
 *   horizon cap).
 * - N = 1 (the next request) + remaining: the loop's remaining tool steps and its final answer
 *   all read the prefix.
 */
import { isAssistant, isUser, type ContextMessage } from "../session/messages.ts";

export interface LoopShape {
  /** The branch ends inside a tool loop: its last message is a tool result the model has not answered. */
  running: boolean;
  /** Index just after the last user message (0 when there is none). */
  loopStart: number;
  /** Raw indices of the current loop's tool-calling assistant messages, oldest first. */
  stepIndices: number[];
  /** Tool steps of each earlier loop on the branch (one per user prompt), oldest first. */
  pastLoopSteps: number[];
}

const callsTools = (m: ContextMessage): boolean => isAssistant(m) && m.content.some((b) => b.type === "toolCall");

/** The current loop and the earlier ones, read off the branch (one pass). */
export function loopShapeOf(messages: readonly ContextMessage[]): LoopShape {
  const pastLoopSteps: number[] = [];
  let loopStart = 0;
  let stepIndices: number[] = [];
  let sawUser = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (isUser(m)) {
      if (sawUser) pastLoopSteps.push(stepIndices.length);
      sawUser = true;
      loopStart = i + 1;
      stepIndices = [];
    } else if (callsTools(m)) stepIndices.push(i);
  }
  const last = messages[messages.length - 1];
  const running = last !== undefined && (last as { role?: string }).role === "toolResult" && stepIndices.length > 0;
  return { running, loopStart, stepIndices, pastLoopSteps };
}

export interface LoopHorizonInput {
  /** Tool steps the running loop has made so far (k). */
  stepsSoFar: number;
  /** Tool steps of the session's earlier loops. */
  pastLoopSteps: readonly number[];
  /** Most remaining steps counted (the gate's horizon cap). */
  cap: number;
}

/** The Lindy prior's share of the steps made so far: two loops in three go on at least this much longer. */
export const LINDY_SHARE = 0.5;

/** Expected tool steps still to come in a loop that has run `stepsSoFar` (see the module comment). */
export function expectedRemainingSteps(input: LoopHorizonInput): number {
  const k = Math.max(0, input.stepsSoFar);
  let sum = LINDY_SHARE * k;
  for (const l of input.pastLoopSteps) if (l >= k) sum += l - k;
  const remaining = sum / (input.pastLoopSteps.length + 1);
  return Math.max(0, Math.min(Math.max(0, input.cap), remaining));
}

/** N for a rewrite inside the running loop: the next request plus the expected remaining ones. */
export function loopExpectedRequests(input: LoopHorizonInput): number {
  return 1 + expectedRemainingSteps(input);
}
