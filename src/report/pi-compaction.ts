/**
 * Pi's own threshold compaction, simulated in a replay arm whose contexts the recording does
 * not show (bare Pi on a session recorded with the keeper, the keeper on one recorded without
 * it). One rule, pure, over Pi's functions handed in (`piReplayPrimitives` binds them):
 *
 * - **When.** Before each request the arm's context is measured as Pi measures it: the usage
 *   of the last answer with usage — in this arm: the arm's own prompt tokens for the request
 *   that answer came from (`armUsage`), plus the answer's output — plus Pi's estimate
 *   (characters / 4) of every message after it; a request that starts a new run (a user
 *   message after the last answer) is measured at the end of the run before, its answer's usage
 *   alone. No answer yet, or none since a compaction: Pi's estimate of every message. Pi
 *   compacts when that passes `contextWindow − reserveTokens` (`compaction.enabled`).
 * - **Where.** Pi's own preparation (`src/compaction/prepare.ts`, held to Pi's by its parity
 *   tests) over the arm's branch as it stood when Pi checked — the whole branch between two
 *   turns of a run; the branch through the last answer before a new prompt — walking back
 *   `keepRecentTokens` from there: the messages to summarize (a split turn's prefix apart), the
 *   first kept entry, the previous summary. A compaction entry of Pi's shape (its system
 *   message, the summary, the first kept entry) follows the branch's last entry, and every later
 *   request whose branch passes there is rebuilt with Pi's own projection: the summary and the
 *   kept messages, then what followed.
 * - **What it costs.** The summary request Pi sends (one per part: the history and a split
 *   turn's prefix): its system prompt, the instructions, the previous summary, the summarized
 *   messages as Pi serializes them (tool results cut to 2,000 characters), all uncached (Pi
 *   writes no cache for summaries), counted at 3.1 characters per token
 *   (`SUMMARY_INPUT_CHARS_PER_TOKEN`, the summarizer prompt's ratio); a summary of
 *   `PI_SUMMARY_SIZE` (assumed: Pi asks for short structured sections, the report calls no
 *   model) plus the file lists Pi appends. The next request writes the new prefix: the cache
 *   model sees the context change after the system prompt.
 *
 * The recording's own compactions: a simulated arm keeps those Pi made on the user's word
 * (`/compact`: Pi's own summary, made below the threshold) and drops the others (Pi's
 * threshold compactions and an extension's, the keeper's background one among them): the arm
 * compacts where its own context passes the threshold instead.
 */
import { prepareCompaction } from "../compaction/prepare.ts";
import type { AgentMessage, CompactionPreparation, PiCompactionPrimitives, SessionEntry } from "../compaction/primitives.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import { SUMMARY_INPUT_CHARS_PER_TOKEN } from "../summarize/summary-size.ts";
import { compactionAt, validUsage } from "./recorded-events.ts";
import { fitToLength } from "./replay-summaries.ts";

/** Pi's compaction settings (`compaction` in Pi's settings.json). */
export interface PiCompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

/** Pi 1.6's `DEFAULT_COMPACTION_SETTINGS` (a test holds them equal). */
export const PI_COMPACTION_DEFAULTS: PiCompactionSettings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };

/** Pi's helpers the simulation runs on (bound to Pi's own in `pi-session-contexts.ts`). */
export interface PiReplayPrimitives extends PiCompactionPrimitives {
  /** The text a summary request carries for these messages (Pi's `serializeConversation` of `convertToLlm`). */
  serializeConversation(messages: AgentMessage[]): string;
}

/**
 * Size of the summary a Pi summary request returns, in tokens: `baseTokens + rate × T` (T: the
 * tokens of the conversation it summarizes), at most `maxTokens`. Assumed, not measured: Pi's
 * history summary has six short sections, a split turn's prefix three.
 */
export interface PiSummarySize {
  baseTokens: number;
  rate: number;
  maxTokens: number;
}

export const PI_SUMMARY_SIZE: { history: PiSummarySize; turnPrefix: PiSummarySize } = {
  history: { baseTokens: 600, rate: 0.01, maxTokens: 4_000 },
  turnPrefix: { baseTokens: 300, rate: 0.01, maxTokens: 2_000 },
};

/**
 * Characters of Pi 1.6's fixed summary-request texts (measured in its compaction module): the
 * system prompt, the instructions of a first summary, of an update (with a previous summary)
 * and of a split turn's prefix, and the tags around the conversation and the previous summary.
 */
const PI_REQUEST_CHARS = { system: 310, first: 880, update: 1_255, turnPrefix: 665, conversationTags: 34, previousTags: 42, prefixHeadings: 33 };

/** Characters per token of a summary's text (the size model's prose ratio). */
const SUMMARY_CHARS_PER_TOKEN = 3.2;

/** What Pi's summary requests for one compaction cost and return. */
export interface PiSummaryCall {
  /** Summary requests: 1, or 2 for a split turn with history before it. */
  requests: number;
  /** Uncached input tokens of the requests. */
  inputTokens: number;
  outputTokens: number;
  /** The summary text as the compaction entry carries it (its size is what matters). */
  summary: string;
}

const tokensOfChars = (chars: number) => Math.ceil(chars / SUMMARY_INPUT_CHARS_PER_TOKEN);
const summaryTokens = (conversationTokens: number, s: PiSummarySize) => Math.min(s.maxTokens, Math.round(s.baseTokens + s.rate * conversationTokens));

/** The file lists Pi appends to a summary: files read and not changed, files changed (edited or written). */
function fileListText(prep: CompactionPreparation): string {
  const changed = new Set([...prep.fileOps.edited, ...prep.fileOps.written]);
  const read = [...prep.fileOps.read].filter((f) => !changed.has(f)).sort();
  const parts = [read.length > 0 ? `files read:\n${read.join("\n")}` : "", changed.size > 0 ? `files changed:\n${[...changed].sort().join("\n")}` : ""].filter(Boolean);
  return parts.length > 0 ? `\n\n${parts.join("\n\n")}` : "";
}

/** Pi's summary requests for a preparation: what they send (uncached) and a summary of `size`. */
export function piSummaryCall(prep: CompactionPreparation, prims: Pick<PiReplayPrimitives, "serializeConversation">, size = PI_SUMMARY_SIZE): PiSummaryCall {
  const c = PI_REQUEST_CHARS;
  let requests = 0;
  let input = 0;
  let output = 0;
  const split = prep.isSplitTurn && prep.turnPrefixMessages.length > 0;
  if (!split || prep.messagesToSummarize.length > 0) {
    const conversation = prims.serializeConversation(prep.messagesToSummarize).length;
    const previous = prep.previousSummary === undefined ? 0 : prep.previousSummary.length + c.previousTags;
    requests++;
    input += tokensOfChars(c.system + c.conversationTags + conversation + previous + (prep.previousSummary === undefined ? c.first : c.update));
    output += summaryTokens(tokensOfChars(conversation), size.history);
  }
  if (split) {
    const conversation = prims.serializeConversation(prep.turnPrefixMessages).length;
    requests++;
    input += tokensOfChars(c.system + c.prefixHeadings + conversation + c.turnPrefix);
    output += summaryTokens(tokensOfChars(conversation), size.turnPrefix);
  }
  const head = `Summary of the conversation so far (the report's stand-in for Pi's compaction summary: ${prep.messagesToSummarize.length + prep.turnPrefixMessages.length} messages).`;
  return { requests, inputTokens: input, outputTokens: output, summary: fitToLength(head, output * SUMMARY_CHARS_PER_TOKEN) + fileListText(prep) };
}

/** Pi's threshold rule (`shouldCompact`). */
export function passesPiThreshold(tokens: number, contextWindow: number, settings: PiCompactionSettings): boolean {
  return settings.enabled && contextWindow > 0 && tokens > contextWindow - settings.reserveTokens;
}

/** How Pi measured the arm's context before a request. */
export interface PiContextMeasure {
  tokens: number;
  /** A user message follows the last answer: Pi checked at the end of the run before, with the branch through that answer. */
  newRun: boolean;
  /** A compaction came after the last answer with usage (or there is none): no check at a new run's start, Pi's estimate of everything between turns. */
  stale: boolean;
}

/**
 * Pi's measure of `context` (the arm's, as Pi built it) before the request: see the header.
 * `armUsage(answer)`: the arm's prompt tokens for the request that answer came from (undefined:
 * unknown, the recorded usage stands).
 */
export function piContextTokens(context: readonly ContextMessage[], armUsage: (answer: ContextMessage) => number | undefined, prims: Pick<PiCompactionPrimitives, "estimateTokens">): PiContextMeasure {
  let last = -1;
  for (let i = context.length - 1; i >= 0 && last < 0; i--) if (validUsage(context[i]!) !== undefined) last = i;
  const newRun = context.slice(last + 1).some((m) => (m as { role?: string }).role === "user");
  const compacted = compactionAt(context);
  const stale = last < 0 || (compacted !== undefined && compacted >= (timestampOf(context[last]!) ?? 0));
  const estimate = (from: number) => context.slice(from).reduce((n, m) => n + prims.estimateTokens(m), 0);
  if (stale) return { tokens: estimate(0), newRun, stale };
  const answer = context[last]!;
  const prompt = armUsage(answer);
  const usage = prompt === undefined ? validUsage(answer)! : prompt + ((answer as { usage?: { output?: number } }).usage?.output ?? 0);
  return { tokens: usage + (newRun ? 0 : estimate(last + 1)), newRun, stale };
}

/** One compaction the simulation made. */
export interface SimulatedCompaction {
  requestIndex: number;
  /** The compaction entry of Pi's shape the arm's later contexts are rebuilt with. */
  entry: SessionEntry;
  tokensBefore: number;
  /** Messages summarized (the history and a split turn's prefix). */
  summarized: number;
  call: PiSummaryCall;
}

export interface PiCompactionSim {
  /** The recording's entries by id, the recorded compactions this arm does not keep made inert. */
  base: ReadonlyMap<string, SessionEntry>;
  /** Recorded compactions made inert. */
  dropped: number;
  compactions: readonly SimulatedCompaction[];
  /** The simulated compactions by the id of the entry they follow. */
  after: ReadonlyMap<string, readonly SimulatedCompaction[]>;
}

/** Inert stand-in for a recorded compaction the arm does not keep: no message, the branch's links intact. */
const DROPPED_COMPACTION = "pi-context-keeper/report-dropped-compaction";

/**
 * The simulation over a recording's entries (migrated, as Pi reads them); `keepRecorded(entry)`
 * says which recorded compactions the arm keeps (`userCompaction`).
 */
export function initialPiCompactionSim(entries: readonly SessionEntry[], keepRecorded: (compaction: SessionEntry) => boolean): PiCompactionSim {
  let dropped = 0;
  const base = new Map<string, SessionEntry>();
  for (const e of entries) {
    if (e.type === "compaction" && !keepRecorded(e)) {
      dropped++;
      base.set(e.id, { type: "custom", customType: DROPPED_COMPACTION, data: undefined, id: e.id, parentId: e.parentId, timestamp: e.timestamp } as SessionEntry);
    } else base.set(e.id, e);
  }
  return { base, dropped, compactions: [], after: new Map() };
}

/**
 * A recorded compaction Pi made on the user's word (`/compact`): Pi's own summary (not an
 * extension's), the context below the threshold when it was made.
 */
export function userCompaction(entry: SessionEntry, contextWindow: number, settings: PiCompactionSettings): boolean {
  const c = entry as { type: string; fromHook?: boolean; tokensBefore?: number };
  return c.type === "compaction" && c.fromHook !== true && !passesPiThreshold(c.tokensBefore ?? 0, contextWindow, settings);
}

const entryTime = (e: SessionEntry) => Date.parse(e.timestamp);

/**
 * The branch to `leafId` in the arm: the recording's, with the simulated compactions spliced
 * in after the entries they follow (before a child made after them), each entry linked to the
 * one before it.
 */
export function simulatedBranch(sim: PiCompactionSim, leafId: string | null): SessionEntry[] {
  const reversed: SessionEntry[] = [];
  const seen = new Set<string>();
  let child: SessionEntry | undefined;
  for (let id = leafId; id !== null && !seen.has(id); ) {
    seen.add(id);
    const e = sim.base.get(id);
    if (!e) break;
    const spliced = (sim.after.get(id) ?? []).filter((c) => child === undefined || entryTime(c.entry) <= entryTime(child));
    for (let i = spliced.length - 1; i >= 0; i--) reversed.push(spliced[i]!.entry);
    reversed.push(e);
    child = e;
    id = e.parentId;
  }
  const branch = reversed.reverse();
  return branch.map((e, i) => {
    const parentId = i === 0 ? e.parentId : branch[i - 1]!.id;
    return e.parentId === parentId ? e : ({ ...e, parentId } as SessionEntry);
  });
}

/** The branch as Pi checked it: all of it between two turns; through the last answer's turn before a new prompt. */
function checkedBranch(branch: readonly SessionEntry[], newRun: boolean): SessionEntry[] {
  if (!newRun) return [...branch];
  const role = (e: SessionEntry) => (e.type === "message" ? (e.message as { role?: string }).role : undefined);
  let answer = branch.length - 1;
  while (answer >= 0 && role(branch[answer]!) !== "assistant") answer--;
  let end = answer + 1;
  while (end < branch.length && role(branch[end]!) !== "user") end++;
  return branch.slice(0, end);
}

export interface PiCompactionRequest {
  requestIndex: number;
  /** The entry the request's context ends with (the answer's parent). */
  leafId: string | null;
  /** The context the recording rebuilds for the request (Pi's, with the recorded compactions). */
  recorded: readonly ContextMessage[];
  /** When the request was sent (its answer's stamp). */
  at: number;
  contextWindow: number;
  settings: PiCompactionSettings;
  /** The arm's prompt tokens for the request an answer came from (undefined: unknown). */
  armUsage: (answer: ContextMessage) => number | undefined;
}

/**
 * One request: its context in the arm (the recorded one while nothing differs from it), after
 * Pi's threshold compaction when the arm's context passed the threshold before it.
 */
export function stepPiCompaction(sim: PiCompactionSim, request: PiCompactionRequest, prims: PiReplayPrimitives): { sim: PiCompactionSim; context: ContextMessage[]; compaction?: SimulatedCompaction } {
  const rebuilt = sim.dropped > 0 || sim.compactions.length > 0;
  const contextOf = (s: PiCompactionSim) => prims.buildSessionProjection(simulatedBranch(s, request.leafId)).messages as ContextMessage[];
  const context = rebuilt ? contextOf(sim) : (request.recorded as ContextMessage[]);
  const measure = piContextTokens(context, request.armUsage, prims);
  if ((measure.newRun && measure.stale) || !passesPiThreshold(measure.tokens, request.contextWindow, request.settings)) return { sim, context };
  const checked = checkedBranch(simulatedBranch(sim, request.leafId), measure.newRun);
  const prep = prepareCompaction(checked, { ...request.settings }, prims);
  const leaf = checked[checked.length - 1];
  if (!prep || !leaf) return { sim, context };
  const call = piSummaryCall(prep, prims);
  const projection = prims.buildSessionProjection(checked);
  // Made right after the branch it follows: later than each of its messages and entries.
  const at = projection.messages.reduce((t, m) => Math.max(t, timestampOf(m) ?? 0), entryTime(leaf)) + 1;
  const system = prims.getCurrentSystemMessage(projection.messages);
  const entry = {
    type: "compaction",
    id: `report-compaction-${sim.compactions.length + 1}`,
    parentId: leaf.id,
    timestamp: new Date(at).toISOString(),
    summary: call.summary,
    firstKeptEntryId: prep.firstKeptEntryId,
    tokensBefore: measure.tokens,
    details: { simulated: true },
    fromHook: false,
    ...(system ? { systemMessage: system } : {}),
  } as unknown as SessionEntry;
  const compaction: SimulatedCompaction = { requestIndex: request.requestIndex, entry, tokensBefore: measure.tokens, summarized: prep.messagesToSummarize.length + prep.turnPrefixMessages.length, call };
  const after = new Map(sim.after);
  after.set(leaf.id, [...(after.get(leaf.id) ?? []), compaction]);
  const next: PiCompactionSim = { ...sim, compactions: [...sim.compactions, compaction], after };
  return { sim: next, context: contextOf(next), compaction };
}
