/**
 * Every call whose output a keeper state hides from the render — stubbed results, aliased
 * duplicates, members of compressed chains — and every failed call whose purged arguments
 * name its ref, as captured calls, so the recall index can hold each one the render offers
 * by ref. (Batches sent to the summarizer are only part of
 * them: duplicates are aliased without a summary, and a collapsed chain also drops trivial
 * batches nobody summarized.)
 */
import { capturedCallOf } from "../flush/capture.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { type ContextMessage, isToolResult } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";
import type { CapturedCall } from "../summarize/batch.ts";

/** Occurrence keys whose output the state hides at render. */
export function hiddenOutputKeys(state: KeeperState): Set<string> {
  const keys = new Set<string>(state.frontier.stubbedKeys);
  for (const k of Object.keys(state.frontier.aliases)) keys.add(k);
  for (const chain of state.frontier.compressedChains) for (const k of chain.memberKeys) keys.add(k);
  return keys;
}

/** Occurrence keys whose ref the render offers: hidden outputs, and failed calls whose purged arguments name their ref. */
export function offeredRefKeys(state: KeeperState): Set<string> {
  const keys = hiddenOutputKeys(state);
  for (const k of state.frontier.purgedErrorKeys) keys.add(k);
  return keys;
}

/**
 * Failed calls whose arguments the render purges while it still shows their output: the purge
 * marker's ref stands for the arguments, so recall brings those back (a hidden output's ref
 * brings back the output).
 */
export function purgedArgumentsOnlyKeys(state: KeeperState): Set<string> {
  const hidden = hiddenOutputKeys(state);
  return new Set(state.frontier.purgedErrorKeys.filter((k) => !hidden.has(k)));
}

/** The calls of `messages` (the branch a flush planned on) whose ref `state` offers at render, in branch order. */
export function prunedCallsOf(messages: readonly ContextMessage[], state: KeeperState): CapturedCall[] {
  const hidden = offeredRefKeys(state);
  const out: CapturedCall[] = [];
  for (const c of pairToolCalls(messages).calls) {
    if (!hidden.has(c.key) || c.resultIndex === undefined) continue;
    const r = messages[c.resultIndex];
    if (!isToolResult(r)) continue;
    out.push(capturedCallOf(c, r));
  }
  return out;
}
