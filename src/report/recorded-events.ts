/**
 * The host's events, read back from a recording: what Pi fired between two recorded requests,
 * as far as the context of the later one shows it. The replay (`keeper-engine.ts`) steps the
 * engine with them exactly as the live host steps it from Pi's events:
 *
 * - `session_compact`: the context now starts with a compaction summary it did not start with
 *   at the request before (Pi compacted in between);
 * - per turn that ended since (an answer newer than the last one stepped, with the tool
 *   results that follow it): `message_end` of the answer (its usage, then the request-end
 *   trigger), then `turn_end` with the context's size as the turn left it;
 * - then the request itself: `context`, `before_provider_request`.
 *
 * The context's size is Pi's usage estimate (`ctx.getContextUsage()`) worked out as Pi works it
 * out, over the recording: the last valid answer's usage plus characters / 4 of each message
 * after it (unknown right after a compaction, until an answer comes) — with the usage of an
 * answer the keeper arm's request would have had: the recorded (bare) usage less what the
 * keeper's render of that request left out, plus what the extension adds to every request (its
 * `keeper_recall` tool: the definition and the system prompt's line for it). Pure.
 */
import { messageChars } from "../discipline/history-view.ts";
import { isAssistant, isToolResult, timestampOf, type ContextMessage } from "../session/messages.ts";

/** One turn that ended: its answer (index and time) and the last message of the turn (its tool results, or the answer). */
export interface RecordedTurn {
  answer: number;
  at: number;
  end: number;
}

/** The turns of `messages` whose answer is newer than `since`, oldest first. */
export function turnsEndedAfter(messages: readonly ContextMessage[], since: number): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const at = timestampOf(m);
    if (!isAssistant(m) || at === undefined || at <= since) continue;
    let end = i;
    while (end + 1 < messages.length && isToolResult(messages[end + 1]!)) end++;
    turns.push({ answer: i, at, end });
  }
  return turns;
}

/**
 * When the compaction the context starts with was made (undefined: the context starts with no
 * compaction summary). Pi's system messages lead it (Pi 1.6 puts the compaction entry's own
 * system message before the summary): the first message that is not one is the summary.
 */
export function compactionAt(messages: readonly ContextMessage[]): number | undefined {
  const first = messages.find((m) => (m as { role?: string }).role !== "system");
  return (first as { role?: string } | undefined)?.role === "compactionSummary" ? (timestampOf(first!) ?? 0) : undefined;
}

/** Tokens (characters / 4) of `messages` (those Pi timed): the recording's stand-in for Pi's context usage. */
export function contextTokensOf(messages: readonly ContextMessage[]): number {
  let chars = 0;
  for (const m of messages) if (timestampOf(m) !== undefined) chars += messageChars(m);
  return Math.ceil(chars / 4);
}

/** Pi's estimate of one message: characters / 4, rounded up. */
const piEstimate = (m: ContextMessage): number => Math.ceil(messageChars(m) / 4);

/**
 * How much smaller the keeper arm's request that got the answer of `answerAt` is than the
 * recorded one (Pi's estimate): what its render left out, less what the extension adds to
 * every request (`addedTokens`; the result is negative when the render left out less).
 */
export interface RenderSaving {
  answerAt: number;
  tokens: number;
}

export function renderSavingOf(answerAt: number, raw: readonly ContextMessage[], rendered: readonly ContextMessage[], addedTokens = 0): RenderSaving {
  let tokens = 0 - addedTokens;
  if (rendered !== raw) for (const m of raw) tokens += piEstimate(m);
  if (rendered !== raw) for (const m of rendered) tokens -= piEstimate(m);
  return { answerAt, tokens };
}

interface UsageLike {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  totalTokens?: number;
}

/** Pi's `calculateContextTokens` of an answer that has valid usage (not aborted, not an error, not all zero); undefined otherwise. */
export function validUsage(m: ContextMessage): number | undefined {
  if (!isAssistant(m) || m.stopReason === "aborted" || m.stopReason === "error") return undefined;
  const u = (m as { usage?: UsageLike }).usage;
  if (!u) return undefined;
  const total = u.totalTokens || (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  return total > 0 ? total : undefined;
}

/**
 * Pi's context usage at the end of `branch`, in the keeper arm (see the header); null when Pi
 * would not know it (a compaction, no answer since). `savings`: by how much the keeper arm's
 * recent requests were smaller than the recorded ones (the one that got the last valid answer
 * is looked up by that answer's time).
 */
export function contextUsageOf(branch: readonly ContextMessage[], savings: readonly RenderSaving[] = []): number | null {
  let last = -1;
  let usage: number | undefined;
  for (let i = branch.length - 1; i >= 0 && usage === undefined; i--) {
    usage = validUsage(branch[i]!);
    if (usage !== undefined) last = i;
  }
  if (compactionAt(branch) !== undefined && usage === undefined) return null;
  if (usage === undefined) return branch.reduce((n, m) => n + piEstimate(m), 0);
  const answerAt = timestampOf(branch[last]!);
  let tokens = Math.max(0, usage - (savings.find((s) => s.answerAt === answerAt)?.tokens ?? 0));
  for (let i = last + 1; i < branch.length; i++) tokens += piEstimate(branch[i]!);
  return tokens;
}
