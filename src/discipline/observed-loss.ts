/**
 * Cache losses nothing announced: a request sent within the TTL that extended the previous
 * one byte for byte, yet read (almost) nothing from the cache. Providers do this (entries are
 * evicted, routed elsewhere); recorded sessions show it mostly on the first request of a new
 * user prompt. The gate cannot foresee one, but it can price the observed rate: a rewrite due
 * at a request that is likely to miss anyway costs less than one that surely reads.
 *
 * Counted separately for requests that start a user prompt and requests inside a tool loop.
 * The chance for the next request is Laplace's rule over its kind: (losses + 1) / (requests + 2).
 */
import { isAssistant, isUser, timestampOf, type ContextMessage } from "../session/messages.ts";

export interface LossCounts {
  requests: number;
  losses: number;
}

export interface ObservedLosses {
  prompt: LossCounts;
  loop: LossCounts;
}

export const emptyObservedLosses = (): ObservedLosses => ({ prompt: { requests: 0, losses: 0 }, loop: { requests: 0, losses: 0 } });

/** One observed request: its kind and whether it lost the cache. A reducer. */
export function recordObservation(counts: ObservedLosses, kind: "prompt" | "loop", lost: boolean): ObservedLosses {
  const c = counts[kind];
  return { ...counts, [kind]: { requests: c.requests + 1, losses: c.losses + (lost ? 1 : 0) } };
}

/** Read below this share of the previous prompt counts as a loss. */
export const LOSS_READ_SHARE = 0.5;

interface Usage {
  input?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

const promptOf = (u: Usage): number => (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);

/**
 * Losses in a history whose assistant messages carry the provider's usage and whose context
 * was sent unchanged between requests (a recording of bare Pi, as the replay has). Requests
 * after a gap longer than the TTL are not counted (their loss is explained).
 */
export function observedLossesInHistory(messages: readonly ContextMessage[], ttlMs: number): ObservedLosses {
  let counts = emptyObservedLosses();
  let previous: { at: number; prompt: number } | undefined;
  let sawUser = false;
  for (const m of messages) {
    if (isUser(m)) sawUser = true;
    if (!isAssistant(m)) continue;
    const u = (m as { usage?: Usage }).usage;
    const at = timestampOf(m);
    if (!u || at === undefined || promptOf(u) === 0) continue;
    if (previous && at - previous.at <= ttlMs && previous.prompt > 0) {
      counts = recordObservation(counts, sawUser ? "prompt" : "loop", (u.cacheRead ?? 0) < LOSS_READ_SHARE * previous.prompt);
    }
    previous = { at, prompt: promptOf(u) };
    sawUser = false;
  }
  return counts;
}

export function lossChance(c: LossCounts): number {
  return (c.losses + 1) / (c.requests + 2);
}

/** Per-request loss rate for later requests, both kinds pooled, with a prior worth 10 requests and 1 loss. */
export function laterLossChance(o: ObservedLosses): number {
  return (o.prompt.losses + o.loop.losses + 1) / (o.prompt.requests + o.loop.requests + 10);
}
