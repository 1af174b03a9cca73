/**
 * A split turn asks Pi's `compact()` for two summaries, one after the other: the history
 * before the turn and the turn's prefix. They do not depend on each other, so the default
 * adapter asks for both at once — two `compact()` calls over two halves of the same
 * preparation — and joins them exactly as Pi does:
 *
 *   <history summary>\n\n---\n\n**Turn Context (split turn):**\n\n<turn prefix summary><file tags>
 *
 * Half the latency, the same text (the parity test compares with Pi's sequential call).
 */
import type { CompactionPreparation, CompactionResult } from "./primitives.ts";

type CompactFn = (preparation: CompactionPreparation) => Promise<CompactionResult>;

/** Both halves need a model call (otherwise Pi makes one call and there is nothing to overlap). */
export function splitsInTwo(p: CompactionPreparation): boolean {
  return p.isSplitTurn && p.turnPrefixMessages.length > 0 && p.messagesToSummarize.length > 0;
}

const NO_FILES = { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() };

export async function compactSplitInParallel(p: CompactionPreparation, compact: CompactFn): Promise<CompactionResult> {
  // History alone: not split, no file tags. Turn prefix alone: no history to summarize, so Pi
  // puts the previous summary (or its placeholder) before the turn context, with the file tags.
  const [history, turn] = await Promise.all([
    compact({ ...p, isSplitTurn: false, turnPrefixMessages: [], fileOps: NO_FILES as never }),
    compact({ ...p, messagesToSummarize: [] }),
  ]);
  const placeholder = p.previousSummary ?? "No prior history.";
  if (!turn.summary.startsWith(placeholder)) throw new Error("unexpected turn-prefix summary layout from compact()");
  return {
    ...turn,
    summary: history.summary + turn.summary.slice(placeholder.length),
    usage: sumUsage(history.usage, turn.usage),
  };
}

type Usage = NonNullable<CompactionResult["usage"]>;

/** The sum of the two calls' usage, the way Pi totals its own two calls. */
function sumUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a || !b) return a ?? b;
  const opt = (k: "cacheWrite1h" | "reasoning") => (a[k] !== undefined || b[k] !== undefined ? { [k]: (a[k] ?? 0) + (b[k] ?? 0) } : {});
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    ...opt("cacheWrite1h"),
    ...opt("reasoning"),
    totalTokens: a.totalTokens + b.totalTokens,
    cost: {
      input: a.cost.input + b.cost.input,
      output: a.cost.output + b.cost.output,
      cacheRead: a.cost.cacheRead + b.cost.cacheRead,
      cacheWrite: a.cost.cacheWrite + b.cost.cacheWrite,
      total: a.cost.total + b.cost.total,
      totalFromProvider: a.cost.totalFromProvider === true && b.cost.totalFromProvider === true,
    },
  };
}
