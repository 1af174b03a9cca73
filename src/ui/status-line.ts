/**
 * The status line: "keeper: 41k ctx · −50k pruned · summaries $0.012". One context figure —
 * the one Pi's footer shows (`ctx.getContextUsage().tokens`, what the last request carried
 * plus what was added since) — and what the keeper keeps out of it. Pure text.
 */

/** Token counts the way Pi's footer prints them (999, 1.2k, 41k, 1.2M). */
export function formatTokenCount(count: number): string {
  const n = Math.max(0, Math.round(count));
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  if (n < 10_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  return `${Math.round(n / 1_000_000)}M`;
}

/** Dollars with enough digits to show a summary's cost. */
export function formatDollars(amount: number): string {
  if (amount === 0) return "$0";
  return amount < 0.01 ? `$${amount.toFixed(4)}` : amount < 10 ? `$${amount.toFixed(3)}` : `$${amount.toFixed(2)}`;
}

export interface StatusLineInput {
  enabled: boolean;
  /** Pi's own context estimate; undefined right after a compaction, until the next answer. */
  contextTokens: number | undefined;
  /** Estimated tokens of the context as rendered, used when Pi has no figure. */
  renderedTokens?: number;
  /** Estimated tokens the keeper's render leaves out of the next request. */
  prunedTokens: number;
  /** Dollars spent on model summaries this session (not in Pi's footer). */
  summarizerCost: number;
  /** A flush in progress ("summarizing 2/5"). */
  progress?: string;
}

export function formatStatusLine(input: StatusLineInput): string {
  if (!input.enabled) return "keeper: off";
  const ctx =
    input.contextTokens !== undefined
      ? `${formatTokenCount(input.contextTokens)} ctx`
      : input.renderedTokens !== undefined
        ? `~${formatTokenCount(input.renderedTokens)} ctx`
        : "? ctx";
  const parts = [`keeper: ${ctx}`];
  parts.push(input.prunedTokens > 0 ? `−${formatTokenCount(input.prunedTokens)} pruned` : "nothing pruned yet");
  if (input.summarizerCost > 0) parts.push(`summaries ${formatDollars(input.summarizerCost)}`);
  if (input.progress) parts.push(input.progress);
  return parts.join(" · ");
}
