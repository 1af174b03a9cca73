/**
 * Compaction preparation, rebuilt from Pi's exported primitives because Pi 1.6 does not
 * export `prepareCompaction()`. It must choose the same cut, the same messages and the same
 * token figure as Pi does for the `session_before_compact` hook, so it reads the branch as
 * Pi stores it (raw entries, Pi's own projection with context edits), never as a pruner
 * renders it for the provider.
 */
import type {
  AgentMessage,
  CompactionPreparation,
  CompactionSettings,
  FileOperations,
  PiCompactionPrimitives,
  SessionEntry,
  SessionProjection,
} from "./primitives.ts";
import { upgradeOf } from "./late-digest-entry.ts";

type ProjectedEntry = SessionProjection["entries"][number];

const CUT_POINT_ROLES = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"]);
const TURN_START_ROLES = new Set(["user", "bashExecution", "custom", "branchSummary", "compactionSummary"]);

function roleOf(message: AgentMessage): string {
  return (message as { role?: string }).role ?? "";
}

function isTurnStart(entry: ProjectedEntry): boolean {
  return entry.sourceEntry.type !== "compaction" && entry.messages.some((m) => TURN_START_ROLES.has(roleOf(m)));
}

interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens?: number;
}

function usageTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** Usage of an assistant message that Pi trusts (not aborted/errored, not all zero). */
function trustedUsage(message: AgentMessage): Usage | undefined {
  const m = message as { role?: string; stopReason?: string; usage?: Usage };
  if (m.role !== "assistant" || !m.usage) return undefined;
  if (m.stopReason === "aborted" || m.stopReason === "error") return undefined;
  return usageTokens(m.usage) > 0 ? m.usage : undefined;
}

/**
 * Pi's projected context estimate: the last trusted usage plus chars/4 for what follows,
 * unless a context edit or compaction came after that usage, in which case a full estimate.
 */
export function estimateProjectedTokens(projection: SessionProjection, branch: SessionEntry[], prims: PiCompactionPrimitives): number {
  const messages = projection.messages;
  let usageIndex = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (trustedUsage(messages[i])) {
      usageIndex = i;
      break;
    }
  }
  if (usageIndex >= 0) {
    let seen = 0;
    let usageEntryId: string | undefined;
    for (const entry of projection.entries) {
      if (usageIndex < seen + entry.messages.length) {
        usageEntryId = entry.sourceEntry.id;
        break;
      }
      seen += entry.messages.length;
    }
    const usageEntryPos = usageEntryId ? branch.findIndex((e) => e.id === usageEntryId) : -1;
    let lastInvalidating = -1;
    for (let i = branch.length - 1; i >= 0; i--) {
      if (branch[i].type === "context_edit" || branch[i].type === "compaction") {
        lastInvalidating = i;
        break;
      }
    }
    if (usageEntryPos > lastInvalidating) {
      let trailing = 0;
      for (let i = usageIndex + 1; i < messages.length; i++) trailing += prims.estimateTokens(messages[i]);
      return usageTokens(trustedUsage(messages[usageIndex])!) + trailing;
    }
  }
  return estimateAllTokens(messages, prims);
}

/** Full chars/4 estimate: the current system prompt once, plus every non-system message. */
export function estimateAllTokens(messages: AgentMessage[], prims: PiCompactionPrimitives): number {
  const system = prims.getCurrentSystemMessage(messages);
  let tokens = system ? prims.estimateTokens(system) : 0;
  for (const m of messages) if (roleOf(m) !== "system") tokens += prims.estimateTokens(m);
  return tokens;
}

interface CutPoint {
  firstKeptEntryIndex: number;
  turnStartIndex: number;
  isSplitTurn: boolean;
}

function isContextVisibleSource(entry: ProjectedEntry, prims: PiCompactionPrimitives): boolean {
  return entry.sourceEntry.type !== "context_edit" && prims.sessionEntryToContextMessages(entry.sourceEntry).length > 0;
}

/** True when the suffix after the cut is only an omitted (recovered) attempt and its edits. */
function isRecoveryOmissionSuffix(suffix: ProjectedEntry[], prims: PiCompactionPrimitives): boolean {
  const omitted = (e: ProjectedEntry) => isContextVisibleSource(e, prims) && e.messages.length === 0;
  const omittedIds = new Set(suffix.filter(omitted).map((e) => e.sourceEntry.id));
  const externalReplacement = suffix.some((e) => {
    const s = e.sourceEntry;
    return s.type === "context_edit" && s.replacement !== null && !omittedIds.has(s.targetId);
  });
  if (externalReplacement) return false;
  const hasOmittedAssistant = suffix.some(
    (e) => e.sourceEntry.type === "message" && roleOf(e.sourceEntry.message) === "assistant" && omitted(e),
  );
  const allInvisible = suffix.every((e) => e.sourceEntry.type !== "compaction" && (!isContextVisibleSource(e, prims) || omitted(e)));
  return hasOmittedAssistant && allInvisible;
}

function findCut(entries: ProjectedEntry[], start: number, end: number, keepRecentTokens: number, prims: PiCompactionPrimitives): CutPoint {
  const cutPoints: number[] = [];
  for (let i = start; i < end; i++) {
    const e = entries[i];
    if (e.sourceEntry.type !== "compaction" && e.messages.some((m) => CUT_POINT_ROLES.has(roleOf(m)))) cutPoints.push(i);
  }
  if (cutPoints.length === 0) return { firstKeptEntryIndex: start, turnStartIndex: -1, isSplitTurn: false };

  let accumulated = 0;
  let exceeded = false;
  let cut = cutPoints[0];
  for (let i = end - 1; i >= start; i--) {
    const tokens = entries[i].messages.reduce((sum, m) => sum + prims.estimateTokens(m), 0);
    if (tokens === 0) continue;
    accumulated += tokens;
    if (accumulated >= keepRecentTokens) {
      exceeded = true;
      cut = cutPoints.find((c) => c >= i) ?? cutPoints[cutPoints.length - 1];
      break;
    }
  }
  if (exceeded && isRecoveryOmissionSuffix(entries.slice(cut + 1, end), prims)) cut++;
  // Pull adjacent context-invisible metadata in front of the cut into the kept range.
  while (cut > start) {
    const previous = entries[cut - 1];
    if (previous.sourceEntry.type === "compaction" || previous.messages.length > 0) break;
    cut--;
  }
  if (isTurnStart(entries[cut])) return { firstKeptEntryIndex: cut, turnStartIndex: -1, isSplitTurn: false };
  let turnStart = -1;
  for (let i = cut; i >= start; i--) {
    if (isTurnStart(entries[i])) {
      turnStart = i;
      break;
    }
  }
  return { firstKeptEntryIndex: cut, turnStartIndex: turnStart, isSplitTurn: turnStart !== -1 };
}

function summarizableMessages(entries: ProjectedEntry[]): AgentMessage[] {
  return entries.flatMap((e) => (e.sourceEntry.type === "compaction" ? [] : e.messages.filter((m) => roleOf(m) !== "system")));
}

function emptyFileOps(): FileOperations {
  return { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() };
}

function addFileOp(name: unknown, args: unknown, ops: FileOperations): void {
  const path = (args as { path?: unknown } | undefined)?.path;
  if (typeof path !== "string" || path === "") return;
  if (name === "read") ops.read.add(path);
  else if (name === "write") ops.written.add(path);
  else if (name === "edit") ops.edited.add(path);
}

/** File operations from an assistant's tool calls, or from calls nested in a tool result. */
export function collectFileOps(message: AgentMessage, ops: FileOperations): void {
  const m = message as { role?: string; content?: unknown; nestedCalls?: { calls?: { name: unknown; arguments: unknown }[] } };
  if (m.role === "toolResult") {
    for (const call of m.nestedCalls?.calls ?? []) addFileOp(call.name, call.arguments, ops);
    return;
  }
  if (m.role !== "assistant" || !Array.isArray(m.content)) return;
  for (const block of m.content as { type?: string; name?: unknown; arguments?: unknown }[]) {
    if (block && typeof block === "object" && block.type === "toolCall" && "name" in block && "arguments" in block) {
      addFileOp(block.name, block.arguments, ops);
    }
  }
}

export interface CatchUpCut {
  /** Where Pi would cut now (a later entry than `fromEntryId`). */
  firstKeptEntryId: string;
  /** The messages between the old cut and the new one, in order (what the old summary lacks). */
  gapMessages: AgentMessage[];
  /** The messages before the old cut since the newest compaction (what the old summary covers of the raw branch). */
  coveredMessages: AgentMessage[];
}

/**
 * Where Pi's cut lies now (walking back `keepRecentTokens` from the leaf) when it is later than
 * `fromEntryId`, an earlier cut on the same branch, with the messages in between; undefined when
 * the old cut is still Pi's (or is not in the projection). Only the range from the old cut on is
 * searched, so the new cut never crosses the newest compaction.
 */
export function catchUpCut(
  pathEntries: SessionEntry[],
  fromEntryId: string,
  keepRecentTokens: number,
  prims: PiCompactionPrimitives,
): CatchUpCut | undefined {
  const entries = prims.buildSessionProjection(pathEntries).entries;
  const from = entries.findIndex((e) => e.sourceEntry.id === fromEntryId);
  if (from < 0) return undefined;
  const cut = findCut(entries, from, entries.length, keepRecentTokens, prims);
  const firstKept = entries[cut.firstKeptEntryIndex]?.sourceEntry;
  if (cut.firstKeptEntryIndex <= from || !firstKept?.id) return undefined;
  return { firstKeptEntryId: firstKept.id, gapMessages: summarizableMessages(entries.slice(from, cut.firstKeptEntryIndex)), coveredMessages: summarizableMessages(entries.slice(0, from)) };
}

/**
 * The summarizable messages from entry `fromEntryId` up to (not including) `toEntryId`, in
 * Pi's projection of the branch; undefined when either is not in it or they are out of order.
 */
export function messagesBetween(pathEntries: SessionEntry[], fromEntryId: string, toEntryId: string, prims: PiCompactionPrimitives): AgentMessage[] | undefined {
  const entries = prims.buildSessionProjection(pathEntries).entries;
  const from = entries.findIndex((e) => e.sourceEntry.id === fromEntryId);
  const to = entries.findIndex((e) => e.sourceEntry.id === toEntryId);
  if (from < 0 || to < from) return undefined;
  return summarizableMessages(entries.slice(from, to));
}

/**
 * The summary a compaction entry stands for as the next summary's "previous summary": its own,
 * or the upgrade a late job's model summary wrote for it (`late-digest.ts`), the newest on the
 * branch.
 */
function summaryStandingFor(pathEntries: SessionEntry[], compaction: SessionEntry & { type: "compaction" }): string {
  for (let i = pathEntries.length - 1; i >= 0; i--) {
    const upgrade = upgradeOf(pathEntries[i]);
    if (upgrade?.compactionEntryId === compaction.id) return upgrade.summary;
  }
  return compaction.summary;
}

/**
 * Pi's preparation for the branch `pathEntries` (root first, as `getBranch()` returns it),
 * or undefined when there is nothing to compact (empty, already compacted, too small).
 */
export function prepareCompaction(
  pathEntries: SessionEntry[],
  settings: CompactionSettings,
  prims: PiCompactionPrimitives,
): CompactionPreparation | undefined {
  if (pathEntries.length > 0 && pathEntries[pathEntries.length - 1].type === "compaction") return undefined;
  const projection = prims.buildSessionProjection(pathEntries);
  const entries = projection.entries;
  // Only the newest compaction contributes its summary; it is projected first.
  const prevIndex = entries.findIndex((e) => e.sourceEntry.type === "compaction" && e.messages.length > 0);
  const previous = prevIndex >= 0 ? entries[prevIndex].sourceEntry : undefined;
  const previousSummary = previous?.type === "compaction" ? summaryStandingFor(pathEntries, previous) : undefined;
  const boundaryStart = prevIndex >= 0 ? prevIndex + 1 : 0;

  const tokensBefore = estimateProjectedTokens(projection, pathEntries, prims);
  const cut = findCut(entries, boundaryStart, entries.length, settings.keepRecentTokens, prims);
  const firstKept = entries[cut.firstKeptEntryIndex]?.sourceEntry;
  if (!firstKept?.id) return undefined;

  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
  const messagesToSummarize = summarizableMessages(entries.slice(boundaryStart, historyEnd));
  const turnPrefixMessages = cut.isSplitTurn ? summarizableMessages(entries.slice(cut.turnStartIndex, cut.firstKeptEntryIndex)) : [];
  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) return undefined;

  const fileOps = emptyFileOps();
  // File lists carried by the previous compaction, only when Pi generated it.
  if (previous?.type === "compaction" && !previous.fromHook && previous.details) {
    const details = previous.details as { readFiles?: unknown; modifiedFiles?: unknown };
    if (Array.isArray(details.readFiles)) for (const f of details.readFiles) fileOps.read.add(f);
    if (Array.isArray(details.modifiedFiles)) for (const f of details.modifiedFiles) fileOps.edited.add(f);
  }
  for (const m of messagesToSummarize) collectFileOps(m, fileOps);
  for (const m of turnPrefixMessages) collectFileOps(m, fileOps);

  return {
    firstKeptEntryId: firstKept.id,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    tokensBefore,
    previousSummary,
    fileOps,
    settings,
  };
}
