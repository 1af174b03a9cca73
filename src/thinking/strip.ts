/**
 * Thinking strip: remove the thinking blocks of old assistant messages from what is sent.
 *
 * Two ways to decide what is "old":
 * - a boundary (an assistant-message timestamp computed at a flush, see `boundary.ts`): every
 *   assistant message with `timestamp < boundary` loses its thinking. The boundary is fixed
 *   between flushes, so every render between two flushes produces the same historical prefix
 *   and the provider's prompt cache survives the tool loop.
 * - no boundary (`undefined` / `null`): the live-count fallback, used before the first flush.
 *   The last K assistant messages keep their thinking (K = max(1, keepLastTurns)).
 *
 * In both modes the current tool loop is never touched (see `current-loop.ts`), and a message
 * is stripped all-or-nothing: every thinking block goes, redacted ones and signatures included.
 *
 * A message whose content was only thinking keeps its place and fields with `content: []`.
 * Every pi-ai serializer (Anthropic, Bedrock, OpenAI completions and responses, Google,
 * Mistral) skips an assistant message that converts to no blocks, so the message simply
 * leaves the wire; Pi already relies on this for empty aborted replies. An empty text
 * placeholder was rejected: the OpenAI Responses serializer would send it as an empty
 * `output_text` item instead of skipping it.
 *
 * Pure: never mutates its input, returns the same array when nothing changes.
 */
import { isAssistant, timestampOf, type AssistantMessage, type ContextMessage } from "../session/messages.ts";
import { clampKeepLastTurns } from "./keep-last-turns.ts";
import { protectedAssistantIndices } from "./current-loop.ts";

export interface ThinkingStripConfig {
  enabled: boolean;
  keepLastTurns: number;
}

/**
 * APIs whose reasoning items are paired by id with the output items after them: OpenAI
 * answers 400 ("function_call ... was provided without its required 'reasoning' item") when
 * a replayed call or message keeps its id but loses its reasoning. Thinking on messages
 * produced through these APIs is never stripped.
 */
export const PAIRED_REASONING_APIS: ReadonlySet<string> = new Set([
  "openai-responses",
  "azure-openai-responses",
  "openai-codex-responses",
]);

function hasThinkingBlock(m: AssistantMessage): boolean {
  return m.content.some((b) => b.type === "thinking");
}

/** A copy of the message with every thinking block removed; everything else kept as is. */
export function withoutThinking(m: AssistantMessage): AssistantMessage {
  return { ...m, content: m.content.filter((b) => b.type !== "thinking") };
}

function isUsableBoundary(boundary: number | null | undefined): boundary is number {
  return typeof boundary === "number" && !Number.isNaN(boundary);
}

/** Index of the oldest assistant message that keeps its thinking under the live count. */
function liveCountCutoff(messages: readonly ContextMessage[], keepLastTurns: number): number {
  const keep = clampKeepLastTurns(keepLastTurns);
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!isAssistant(messages[i]!)) continue;
    seen++;
    if (seen === keep) return i;
  }
  return 0; // fewer than K assistant messages: nothing is old
}

function hasStrippableThinking(m: AssistantMessage): boolean {
  return hasThinkingBlock(m) && !PAIRED_REASONING_APIS.has(m.api);
}

/**
 * Whether the strip with this boundary removes `m`'s thinking unless `m` is protected (current
 * loop, last assistant message). A message without a timestamp cannot be placed against the
 * boundary: left alone.
 */
export function strippedUnlessProtected(m: ContextMessage, boundary: number): boolean {
  if (!isAssistant(m) || !hasStrippableThinking(m)) return false;
  const t = timestampOf(m);
  return t !== undefined && t < boundary;
}

export function stripOldThinking(
  messages: ContextMessage[],
  config: ThinkingStripConfig,
  boundary?: number | null,
): ContextMessage[] {
  if (!config.enabled) return messages;

  const byBoundary = isUsableBoundary(boundary);
  const cutoff = byBoundary ? 0 : liveCountCutoff(messages, config.keepLastTurns);

  let protectedIndices: Set<number> | undefined;
  let out: ContextMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    let replacement: ContextMessage | undefined;
    if (isAssistant(m) && (byBoundary ? strippedUnlessProtected(m, boundary) : hasStrippableThinking(m) && i < cutoff)) {
      protectedIndices ??= protectedAssistantIndices(messages);
      if (!protectedIndices.has(i)) replacement = withoutThinking(m);
    }
    if (replacement !== undefined) {
      out ??= messages.slice(0, i);
      out.push(replacement);
    } else if (out !== undefined) {
      out.push(m);
    }
  }
  return out ?? messages;
}
