/** Conversation builders for the thinking-strip tests. Timestamps grow by 10 per message. */
import type { AssistantMessage, ThinkingContent } from "@earendil-works/pi-ai";
import type { ContextMessage } from "../../../src/session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../message-factory.ts";

export class Clock {
  constructor(private t = 1_000) {}
  next(): number {
    this.t += 10;
    return this.t;
  }
}

export function redactedThinking(payload: string): ThinkingContent {
  return { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: payload, redacted: true };
}

/** One closed request: a user prompt, `toolSteps` tool-use steps, then a final text answer. */
export function closedRequest(clock: Clock, label: string, toolSteps = 0): ContextMessage[] {
  const out: ContextMessage[] = [user(`please ${label}`, clock.next())];
  out.push(...toolLoop(clock, label, toolSteps));
  out.push(assistant([thinking(`conclude ${label}`), text(`done ${label}`)], clock.next()));
  return out;
}

/** `steps` assistant tool calls, each with thinking and followed by its result. */
export function toolLoop(clock: Clock, label: string, steps: number): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (let i = 0; i < steps; i++) {
    const id = `${label}-call-${i}`;
    out.push(assistant([thinking(`plan ${label} ${i}`), call(id, "read", { path: `${label}/${i}.ts` })], clock.next()));
    out.push(result(id, "read", `contents of ${label}/${i}.ts`, clock.next()));
  }
  return out;
}

/** A history of `requests` closed requests, each with `toolSteps` tool steps. */
export function history(clock: Clock, requests: number, toolSteps = 1): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (let r = 0; r < requests; r++) out.push(...closedRequest(clock, `r${r}`, toolSteps));
  return out;
}

export function assistantsOf(messages: readonly ContextMessage[]): AssistantMessage[] {
  return messages.filter((m): m is AssistantMessage => (m as { role?: string }).role === "assistant");
}

export function thinkingCount(m: ContextMessage): number {
  const content = (m as { role?: string; content?: unknown }).content;
  if ((m as { role?: string }).role !== "assistant" || !Array.isArray(content)) return 0;
  return content.filter((b: { type?: string }) => b.type === "thinking").length;
}

/** Assistant timestamps whose messages still carry thinking. */
export function stampsWithThinking(messages: readonly ContextMessage[]): number[] {
  return assistantsOf(messages)
    .filter((m) => thinkingCount(m) > 0)
    .map((m) => m.timestamp);
}
