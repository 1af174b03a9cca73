/**
 * Chain-compression decisions, made at a flush: closed chains with at least `rollingWindow`
 * user prompts after their final answer collapse (0: at the flush of their own final answer),
 * provided every batch in them can be described without its raw output — it was summarized
 * (its summary rendered as a stub, or kept raw when not shorter: an output of error lines
 * only), or each of its outputs is aliased to an identical summarized one or trivial (the
 * outputs not aliased are short together: the call line is enough, the original stays
 * recallable). `keeper_recall` calls never hold a chain back: their output is a copy of an
 * original one recall away, and their line names the ref they recalled. A chain holding a
 * protected call, or a batch not summarized, stays as it is.
 *
 * The collapsed text is one line per call — what was called, whether it failed (and, when the
 * line cuts a failed call's arguments, that `arguments=true` recalls them), the images its
 * output carried (left out, one recall away), its recall ref —
 * and no summaries: the chain's final answer, kept after it, says what the calls found,
 * and any output is one `keeper_recall` away. Under a failed call's line go the lines an agent
 * comes back for — its failing tests and error lines (`kept-facts.ts`), within
 * `keptFactChars`, each kept once across chains. So a chain costs a short line per call
 * however long its outputs or their summaries were.
 */
import { type ContextMessage, isAssistant, isToolResult, timestampOf, toolCallsOf, toolResultText } from "../session/messages.ts";
import type { PruneConfig } from "../prune/config.ts";
import { findClosedChains } from "../prune/chains.ts";
import { DEFAULT_KEPT_FACT_CHARS, RECALL_TOOL_NAME, isRecallCopy } from "../prune/config.ts";
import { type CallOccurrence, type Pairing, batchKeyOf } from "../prune/occurrence.ts";
import type { ProtectionMatcher } from "../prune/protection.ts";
import { FAILED_ARGUMENTS_HINT, PART_HINT, STUB_PREFIX, describeCall, describeCallCuts } from "../prune/stub-text.ts";
import { keptFacts } from "../summarize/kept-facts.ts";
import { imageNote, resultWeight } from "../summarize/batch.ts";
import { capturedCallOf } from "./capture.ts";
import { findPaths } from "../summarize/output-facts.ts";
import type { CompressedChain, SummaryRecord } from "../state/schema.ts";

export interface ChainPlanInput {
  messages: readonly ContextMessage[];
  pairing: Pairing;
  /** Summaries after this flush's new ones are added. */
  summaries: Readonly<Record<string, SummaryRecord>>;
  /** Aliases after this flush's new ones are added. */
  aliases: Readonly<Record<string, string>>;
  existingChainKeys: ReadonlySet<string>;
  /**
   * Calls already in a recorded chain: what a compaction left of that chain still collapses
   * with it (`chain-compress.ts`), so no new chain is proposed over them.
   */
  existingMembers?: ReadonlySet<string>;
  /** Fact lines the chains already collapsed keep (`keptFactLinesOf`): a later chain does not repeat them. */
  keptLines?: ReadonlySet<string>;
  config: PruneConfig;
  protection: ProtectionMatcher;
}

/** Kept fact lines sit under their call line, indented by this. */
const FACT_INDENT = "    ";

/** Output paths listed per call line at most (the extractive summary's cap). */
const MAX_PATHS_PER_CALL = 40;

/**
 * `- read(path=src/a.ts) (failed) ref=<key>` (`(failed; arguments=true recalls its arguments)`
 * when the line cuts the arguments), with ` → paths: …` for the file paths its output
 * named that the chain text has not named yet (`named` collects them across the chain), then
 * a failed call's kept facts (its failing tests and error lines), one per indented line.
 */
function callLine(c: CallOccurrence, messages: readonly ContextMessage[], named: Set<string>, kept: Set<string>, factChars: number): string {
  const r = c.resultIndex === undefined ? undefined : messages[c.resultIndex];
  const isFailed = !!r && isToolResult(r) && r.isError;
  // A failed call's arguments exist nowhere else (a failed write's content is on no disk): when the line cuts them, it says how to recall them.
  const failed = !isFailed ? "" : describeCallCuts(c.arguments) ? ` (failed; ${FAILED_ARGUMENTS_HINT})` : " (failed)";
  const call = describeCall(c.toolName, c.arguments);
  // A recall's paths are its original's, which that call's own line names.
  const fresh = r && isToolResult(r) && !isRecallCopy(c.toolName) ? findPaths(toolResultText(r)).filter((p) => !named.has(p) && !call.includes(p)).slice(0, MAX_PATHS_PER_CALL) : [];
  for (const p of fresh) named.add(p);
  const facts = r && isToolResult(r) && !isRecallCopy(c.toolName) ? keptFacts({ toolName: c.toolName, resultText: toolResultText(r), isError: r.isError }, { maxChars: factChars, skip: kept }) : [];
  for (const f of facts) kept.add(f);
  const images = r && isToolResult(r) && !isRecallCopy(c.toolName) ? imageNote(capturedCallOf(c, r).images) : undefined;
  // The ref ends the call's line: recall readers find it there.
  return [`- ${call}${failed}${images ? ` → ${images}` : ""}${fresh.length > 0 ? ` → paths: ${fresh.join(", ")}` : ""} ref=${c.key}`, ...facts.map((f) => `${FACT_INDENT}${f}`)].join("\n");
}

/** Whether a batch may collapse into call lines (see the module comment). */
function batchCollapses(batch: CallOccurrence[], input: ChainPlanInput): boolean {
  const { messages, config } = input;
  if (batch.some((c) => input.protection.isProtected(c.toolName, c.arguments))) return false;
  const group = batch.filter((c) => !isRecallCopy(c.toolName));
  if (group.length === 0) return true;
  const first = batch[0];
  const record = input.summaries[batchKeyOf(first.toolCallId, first.assistantTimestamp)];
  // Kept raw (its summary was not shorter) or stubbed, a summarized batch collapses alike: a
  // chain's call lines never carry summaries.
  if (record) {
    const covered = new Set(record.coveredKeys);
    return group.every((c) => covered.has(c.key) || input.aliases[c.key] !== undefined);
  }
  // Aliased outputs point at an identical summarized one; what is left must be trivial.
  const chars = group.filter((c) => input.aliases[c.key] === undefined).reduce((n, c) => {
    const r = c.resultIndex === undefined ? undefined : messages[c.resultIndex];
    return n + (r && isToolResult(r) ? resultWeight(capturedCallOf(c, r)) : 0);
  }, 0);
  return chars < config.minBatchChars;
}

/** A stand-in for the prompt that will follow a final answer (rollingWindow 0). */
const NEXT_PROMPT: ContextMessage = { role: "user", content: "", timestamp: Number.MAX_SAFE_INTEGER } as ContextMessage;

/**
 * The chains to look at: with `rollingWindow` 0 a branch that ends on its final answer counts
 * the next prompt as come, so the chain that just ended collapses at its own flush (the
 * request that shows it is the next prompt's).
 */
function chainsOf(messages: readonly ContextMessage[], pairing: Pairing, rollingWindow: number) {
  const last = messages[messages.length - 1];
  const endsOnAnswer = last !== undefined && isAssistant(last) && toolCallsOf(last).length === 0;
  return findClosedChains(rollingWindow === 0 && endsOnAnswer ? [...messages, NEXT_PROMPT] : messages, pairing);
}

export function proposeChains(input: ChainPlanInput): CompressedChain[] {
  const { messages, pairing, config } = input;
  if (!config.chainCompression.enabled) return [];
  const window = Math.max(1, config.chainCompression.rollingWindow);
  const out: CompressedChain[] = [];
  const kept = new Set(input.keptLines ?? []);
  for (const chain of chainsOf(messages, pairing, config.chainCompression.rollingWindow)) {
    if (chain.promptsAfter < window) continue;
    const inside = pairing.calls.filter((c) => c.assistantIndex >= chain.startIndex && c.assistantIndex <= chain.endIndex);
    const replayed = inside.filter((c) => c.replayed);
    if (replayed.length === 0) continue;
    const chainKey = `chain:${batchKeyOf(replayed[0].toolCallId, replayed[0].assistantTimestamp)}`;
    if (input.existingChainKeys.has(chainKey) || input.existingMembers?.has(replayed[0].key)) continue;

    const groups = new Map<number, CallOccurrence[]>();
    for (const c of replayed) groups.set(c.assistantIndex, [...(groups.get(c.assistantIndex) ?? []), c]);
    const parts: string[] = [];
    const named = new Set<string>();
    const summaryRefs: string[] = [];
    let ok = true;
    for (const group of groups.values()) {
      if (!batchCollapses(group, input)) {
        ok = false;
        break;
      }
      parts.push(...group.map((c) => callLine(c, messages, named, kept, config.chainCompression.keptFactChars ?? DEFAULT_KEPT_FACT_CHARS)));
      const batchKey = batchKeyOf(group[0].toolCallId, group[0].assistantTimestamp);
      if (input.summaries[batchKey]) summaryRefs.push(batchKey);
    }
    if (!ok) continue;

    const firstCall = inside[0];
    const header =
      `${STUB_PREFIX} compressed tool chain: ${replayed.length} tool call(s) for the prompt above, outputs pruned ` +
      `(the answer below says what they found); recall any with ${RECALL_TOOL_NAME} ref=<ref> ${PART_HINT}:`;
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

/** The fact lines of collapsed chains' texts (the indented lines under their call lines). */
export function keptFactLinesOf(chains: readonly CompressedChain[]): Set<string> {
  const out = new Set<string>();
  for (const c of chains) for (const line of c.text.split("\n")) if (line.startsWith(FACT_INDENT)) out.add(line.slice(FACT_INDENT.length));
  return out;
}
