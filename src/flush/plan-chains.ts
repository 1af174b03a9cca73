/**
 * Chain-compression decisions, made at a flush: closed chains with at least
 * `rollingWindow` user prompts after their final answer collapse, provided every batch in
 * them can be described without its raw output — it has a summary that renders as a stub,
 * or its outputs are aliased to identical summarized ones, or it is trivial (short output;
 * the call line is enough, the original stays recallable). A chain holding a protected
 * call, or a batch kept raw or not summarized, stays as it is.
 */
import { type ContextMessage, isToolResult, timestampOf, toolResultText } from "../session/messages.ts";
import type { PruneConfig } from "../prune/config.ts";
import { findClosedChains } from "../prune/chains.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { type CallOccurrence, type Pairing, batchKeyOf } from "../prune/occurrence.ts";
import type { ProtectionMatcher } from "../prune/protection.ts";
import { STUB_PREFIX, describeCall } from "../prune/stub-text.ts";
import type { CompressedChain, SummaryRecord } from "../state/schema.ts";

export interface ChainPlanInput {
  messages: readonly ContextMessage[];
  pairing: Pairing;
  /** Summaries after this flush's new ones are added. */
  summaries: Readonly<Record<string, SummaryRecord>>;
  /** Aliases after this flush's new ones are added. */
  aliases: Readonly<Record<string, string>>;
  existingChainKeys: ReadonlySet<string>;
  config: PruneConfig;
  protection: ProtectionMatcher;
}

function callLine(c: CallOccurrence, messages: readonly ContextMessage[]): string {
  const r = c.resultIndex === undefined ? undefined : messages[c.resultIndex];
  const failed = r && isToolResult(r) && r.isError ? " (failed)" : "";
  return `- ${describeCall(c.toolName, c.arguments)}${failed} ref=${c.key}`;
}

/** Text for one batch, or undefined when the batch cannot be compressed. */
function describeBatch(group: CallOccurrence[], input: ChainPlanInput, recordOf: (k: string) => SummaryRecord | undefined): string | undefined {
  const { messages, config } = input;
  if (group.some((c) => input.protection.isProtected(c.toolName, c.arguments))) return undefined;
  const lines = group.map((c) => callLine(c, messages));
  const first = group[0];
  const record = input.summaries[batchKeyOf(first.toolCallId, first.assistantTimestamp)];
  if (record && record.summary.source !== "raw") {
    const covered = new Set(record.coveredKeys);
    if (!group.every((c) => covered.has(c.key) || input.aliases[c.key] !== undefined)) return undefined;
    return [...lines, `  summary: ${record.summary.text}`].join("\n");
  }
  if (group.every((c) => input.aliases[c.key] !== undefined)) {
    const texts = group.map((c) => recordOf(input.aliases[c.key])?.summary.text ?? "");
    return [...lines, ...texts.map((t) => `  summary (identical output): ${t}`)].join("\n");
  }
  const chars = group.reduce((n, c) => {
    const r = c.resultIndex === undefined ? undefined : messages[c.resultIndex];
    return n + (r && isToolResult(r) ? toolResultText(r).length : 0);
  }, 0);
  if (chars < config.minBatchChars) return lines.join("\n");
  return undefined;
}

export function proposeChains(input: ChainPlanInput): CompressedChain[] {
  const { messages, pairing, config } = input;
  if (!config.chainCompression.enabled) return [];
  const window = Math.max(1, config.chainCompression.rollingWindow);
  const byCoveredKey = new Map<string, SummaryRecord>();
  for (const r of Object.values(input.summaries)) for (const k of r.coveredKeys) byCoveredKey.set(k, r);
  const recordOf = (k: string) => byCoveredKey.get(k);

  const out: CompressedChain[] = [];
  for (const chain of findClosedChains(messages, pairing)) {
    if (chain.promptsAfter < window) continue;
    const inside = pairing.calls.filter((c) => c.assistantIndex >= chain.startIndex && c.assistantIndex <= chain.endIndex);
    const replayed = inside.filter((c) => c.replayed);
    if (replayed.length === 0) continue;
    const chainKey = `chain:${batchKeyOf(replayed[0].toolCallId, replayed[0].assistantTimestamp)}`;
    if (input.existingChainKeys.has(chainKey)) continue;

    const groups = new Map<number, CallOccurrence[]>();
    for (const c of replayed) groups.set(c.assistantIndex, [...(groups.get(c.assistantIndex) ?? []), c]);
    const parts: string[] = [];
    const summaryRefs: string[] = [];
    let ok = true;
    for (const group of groups.values()) {
      const text = describeBatch(group, input, recordOf);
      if (text === undefined) {
        ok = false;
        break;
      }
      parts.push(text);
      const batchKey = batchKeyOf(group[0].toolCallId, group[0].assistantTimestamp);
      if (input.summaries[batchKey]) summaryRefs.push(batchKey);
    }
    if (!ok) continue;

    const firstCall = inside[0];
    const header =
      `${STUB_PREFIX} compressed tool chain: ${replayed.length} tool call(s) made for the prompt above; ` +
      `outputs summarized below. Recall any original with ${RECALL_TOOL_NAME} ref=<ref>.`;
    out.push({
      chainKey,
      fromTimestamp: timestampOf(messages[chain.startIndex]) ?? -1,
      toTimestamp: timestampOf(messages[chain.endIndex]) ?? -1,
      firstCallKey: firstCall.key,
      messageCount: chain.endIndex - chain.startIndex + 1,
      memberKeys: inside.map((c) => c.key),
      summaryRefs,
      text: [header, ...parts].join("\n"),
    });
  }
  return out;
}
