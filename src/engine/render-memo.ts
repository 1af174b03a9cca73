/**
 * A flush renders the same (messages, state) pair more than once under two names: the gate
 * measures the branch before and after the proposal with the `context` render, and the
 * savings estimate renders it again without the thinking strip. When the thinking strip is
 * off for the model, those renders are the same function; this memo serves the repeat.
 *
 * Key: the message array (same length, same objects, except a trailing prompt probe, which
 * matches any other probe) and the parts of the state a render reads (the summaries object
 * and the frontier's render fields), so a trial state and the applied one share a render
 * when the gate applied everything.
 */
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";

type Render = (messages: ContextMessage[], state: KeeperState) => ContextMessage[];

const isProbe = (m: ContextMessage | undefined): boolean =>
  m !== undefined && m.role === "user" && (m as { content?: unknown }).content === "" && (m as { timestamp?: number }).timestamp === Number.MAX_SAFE_INTEGER;

function sameMessages(a: readonly ContextMessage[], b: readonly ContextMessage[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(i === a.length - 1 && isProbe(a[i]) && isProbe(b[i]))) return false;
  return true;
}

function renderKey(state: KeeperState): string {
  const f = state.frontier;
  return JSON.stringify([f.stubbedKeys, f.aliases, f.purgedErrorKeys, f.compressedChains.map((c) => c.chainKey), f.thinkingStripBoundaryTimestamp, f.flushSeq > 0]);
}

/** `render` with the repeats of one flush served from memory. */
export function memoizedRender(render: Render): Render {
  const seen: Array<{ messages: readonly ContextMessage[]; summaries: KeeperState["summaries"]; key: string; out: ContextMessage[] }> = [];
  return (messages, state) => {
    const key = renderKey(state);
    const hit = seen.find((s) => s.summaries === state.summaries && s.key === key && sameMessages(s.messages, messages));
    if (hit) return hit.out;
    const out = render(messages, state);
    seen.push({ messages, summaries: state.summaries, key, out });
    return out;
  };
}
