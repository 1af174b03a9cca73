/**
 * What one summary call cost, as far as it is known: the final message's usage when the call
 * ended; for a call stopped before its end (an abort, a timeout, a shutdown) the usage its
 * stream reported so far, else — the call went out but the provider reported nothing — the
 * estimate of what was sent. One accounting for every summary call the keeper makes: the
 * flush summarizer's (`summary-call.ts`) and async compaction's background summaries
 * (`src/compaction/run-spend.ts`).
 */
import type { AssistantMessage, Context } from "@earendil-works/pi-ai";

/** The fields of the final assistant message the summarizer reads. */
export type SummaryResultMessage = Pick<AssistantMessage, "content" | "stopReason" | "errorMessage" | "usage">;

export interface CallUsage {
  /** Prompt tokens: fresh input plus cache reads and writes. */
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** The provider reported nothing before the call was stopped: the estimate of what was sent. */
  estimated?: true;
}

const ZERO_USAGE: CallUsage = { inputTokens: 0, outputTokens: 0, cost: 0 };

export function usageOf(message: { usage?: SummaryResultMessage["usage"] }): CallUsage {
  const u = message.usage;
  if (!u) return ZERO_USAGE;
  return { inputTokens: (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0), outputTokens: u.output ?? 0, cost: u.cost?.total ?? 0 };
}

/** Usage a stream event carries so far (pi-ai's events hold the partial message; the last ones the final or error one). */
export function usageSeen(event: unknown): CallUsage | undefined {
  const e = event as { partial?: SummaryResultMessage; message?: SummaryResultMessage; error?: SummaryResultMessage } | undefined;
  const message = e?.partial ?? e?.message ?? e?.error;
  if (!message?.usage) return undefined;
  const usage = usageOf(message);
  return usage.inputTokens > 0 || usage.outputTokens > 0 || usage.cost > 0 ? usage : undefined;
}

/** Characters of a summary call's prompt (system prompt and message texts), for an estimate of what was sent. */
export function promptChars(context: Context): number {
  let chars = context.systemPrompt?.length ?? 0;
  for (const m of context.messages) {
    const content = (m as { content?: unknown }).content;
    if (typeof content === "string") chars += content.length;
    else if (Array.isArray(content)) for (const b of content) if (b && typeof b === "object" && "text" in b && typeof b.text === "string") chars += b.text.length;
  }
  return chars;
}

/**
 * What a summary call that was stopped before any usage came back is taken to cost: its prompt
 * at chars/4 tokens (Pi's own estimate), billed as uncached input at `inputPerMillion` dollars.
 */
export function sentUsageEstimate(context: Context, inputPerMillion: number): CallUsage {
  const inputTokens = Math.ceil(promptChars(context) / 4);
  return { inputTokens, outputTokens: 0, cost: (inputTokens * Math.max(0, inputPerMillion)) / 1_000_000 };
}

/** One call's spend as it goes: `sent` when it goes out, `saw` each stream event, `ended` with its final message. */
export interface CallSpend {
  sent(): void;
  saw(event: unknown): void;
  /** The call ended with this message: its usage is what the call cost. */
  ended(message: { usage?: SummaryResultMessage["usage"] }): CallUsage;
  /** A call stopped before its end: the usage seen so far, else the estimate of what was sent (undefined: nothing went out, or no estimate). */
  stopped(): CallUsage | undefined;
  /** The usage the stream reported so far, if any. */
  seen(): CallUsage | undefined;
  /** What the call cost as far as is known now: its final usage once ended, else what `stopped` says. */
  current(): CallUsage | undefined;
}

export function trackCallSpend(options: { context: Context; sentEstimate?: (context: Context) => CallUsage }): CallSpend {
  let sent = false;
  let seen: CallUsage | undefined;
  let final: CallUsage | undefined;
  const stopped = (): CallUsage | undefined => seen ?? (sent && options.sentEstimate ? { ...options.sentEstimate(options.context), estimated: true } : undefined);
  return {
    sent: () => {
      sent = true;
    },
    saw: (event) => {
      seen = usageSeen(event) ?? seen;
    },
    ended: (message) => {
      final = usageOf(message);
      return final;
    },
    stopped,
    seen: () => seen,
    current: () => final ?? stopped(),
  };
}

/** The usage of several calls added up (estimated when any of them was). */
export function sumCallUsage(usages: ReadonlyArray<CallUsage | undefined>): CallUsage {
  let total: CallUsage = { ...ZERO_USAGE };
  for (const u of usages) {
    if (!u) continue;
    total = { inputTokens: total.inputTokens + u.inputTokens, outputTokens: total.outputTokens + u.outputTokens, cost: total.cost + u.cost, ...(total.estimated || u.estimated ? { estimated: true as const } : {}) };
  }
  return total;
}
