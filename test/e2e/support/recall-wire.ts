/**
 * Reading stubs and `keeper_recall` pages off the wire, and originals off the session file,
 * for the recall e2e tests.
 */
import type { WireBlock, WireMessage, WireRequest } from "../../support/fake-anthropic/index.ts";
import type { RpcRecord, RpcStep } from "../../support/pi-runner.ts";

/** Until the n-th flush has set its status line (`keeper: context Xk → Yk`, set at the end of every flush that changed the context). */
export const flushed = (n: number): RpcStep => ({
  waitFor: (_r: RpcRecord, all: readonly RpcRecord[]) => all.filter((x) => x.method === "setStatus" && String(x.statusText ?? "").startsWith("keeper: context ")).length >= n,
  timeoutMs: 10_000,
});

export const STUB_HEAD = "[context-keeper] output pruned";
export const CHAIN_HEAD = "[context-keeper] compressed tool chain";
/** A compressed chain's call line and the ref it names. */
export const CHAIN_REF = /^- .* ref=(\S+@-?\d+#\d+)$/gm;
/** A stub's ref, with or without the part hint in parentheses after it. */
export const STUB_REF = /keeper_recall ref=(\S+?)(?: \([^)]*\))?[.:](?:\s|$)/;
const PAGE_HEADER = /^\[keeper_recall ref=(\S+) tool=\S+(?: arguments)?\] chars (\d+)-(\d+) of (\d+) \(bytes \d+-\d+ of \d+\), (?:next offset (\d+)|end of output)$/;

export function blocksOf(m: WireMessage): WireBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

/** Text of a tool_result block (string content or text blocks, joined as pi-ai splits them). */
export function toolResultBlockText(b: WireBlock): string {
  if (typeof b.content === "string") return b.content;
  if (!Array.isArray(b.content)) return "";
  return (b.content as WireBlock[])
    .filter((c) => c.type === "text")
    .map((c) => String(c.text ?? ""))
    .join("\n");
}

/** Index of the last user message holding anything but tool results (the human prompt). */
export function humanPromptIndex(messages: WireMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "user" && blocksOf(m).some((b) => b.type !== "tool_result")) return i;
  }
  return -1;
}

export function humanPromptText(body: WireRequest): string {
  const i = humanPromptIndex(body.messages);
  return i < 0 ? "" : blocksOf(body.messages[i]).filter((b) => b.type === "text").map((b) => String(b.text ?? "")).join("\n");
}

/** Refs of every stub and compressed-chain call line in the messages before `end`, in order, deduplicated. */
export function stubRefs(messages: WireMessage[], end = messages.length): string[] {
  const refs: string[] = [];
  for (const m of messages.slice(0, end)) {
    for (const b of blocksOf(m)) {
      if (b.type === "text" && String(b.text ?? "").startsWith(CHAIN_HEAD)) {
        for (const x of String(b.text).matchAll(CHAIN_REF)) if (!refs.includes(x[1]!)) refs.push(x[1]!);
      }
      if (b.type !== "tool_result") continue;
      const text = toolResultBlockText(b);
      if (!text.startsWith(STUB_HEAD)) continue;
      const ref = STUB_REF.exec(text)?.[1];
      if (ref && !refs.includes(ref)) refs.push(ref);
    }
  }
  return refs;
}

export interface RecallExchange {
  input: Record<string, unknown>;
  text: string;
  isError: boolean;
}

/** `keeper_recall` calls of the current tool loop with their results, in order. */
export function recallExchanges(messages: WireMessage[]): RecallExchange[] {
  const out: RecallExchange[] = [];
  const start = humanPromptIndex(messages) + 1;
  for (let i = start; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    const next = messages[i + 1];
    const results = next ? blocksOf(next).filter((b) => b.type === "tool_result") : [];
    for (const b of blocksOf(m)) {
      if (b.type !== "tool_use" || b.name !== "keeper_recall") continue;
      const r = results.find((x) => x.tool_use_id === b.id);
      if (r) out.push({ input: (b.input ?? {}) as Record<string, unknown>, text: toolResultBlockText(r), isError: r.is_error === true });
    }
  }
  return out;
}

export interface RecallPage {
  ref: string;
  start: number;
  end: number;
  total: number;
  nextOffset: number | undefined;
  body: string;
}

/** A successful recall result: its header parsed and the verbatim page after it. */
export function parsePage(text: string): RecallPage | undefined {
  const nl = text.indexOf("\n");
  if (nl < 0) return undefined;
  const m = PAGE_HEADER.exec(text.slice(0, nl));
  if (!m) return undefined;
  return { ref: m[1]!, start: Number(m[2]), end: Number(m[3]), total: Number(m[4]), nextOffset: m[5] === undefined ? undefined : Number(m[5]), body: text.slice(nl + 1) };
}

/** For each ref: the offset still to fetch (0 when never asked), or undefined when complete or refused. */
export function pendingOffsets(refs: string[], exchanges: RecallExchange[]): Map<string, number | undefined> {
  const state = new Map<string, number | undefined>(refs.map((r) => [r, 0]));
  for (const x of exchanges) {
    if (x.isError && typeof x.input.ref === "string" && state.has(x.input.ref)) state.set(x.input.ref, undefined);
    const page = x.isError ? undefined : parsePage(x.text);
    if (!page || !state.has(page.ref)) continue;
    state.set(page.ref, page.nextOffset);
  }
  return state;
}

/** Pages per ref concatenated in offset order (only contiguous pages from 0 count). */
export function assemblePages(exchanges: RecallExchange[]): Map<string, string> {
  const pages = new Map<string, RecallPage[]>();
  for (const x of exchanges) {
    const page = x.isError ? undefined : parsePage(x.text);
    if (page) pages.set(page.ref, [...(pages.get(page.ref) ?? []), page]);
  }
  const out = new Map<string, string>();
  for (const [ref, list] of pages) {
    list.sort((a, b) => a.start - b.start);
    let text = "";
    let at = 0;
    for (const p of list) {
      if (p.start !== at) break;
      text += p.body;
      at = p.end;
    }
    out.set(ref, text);
  }
  return out;
}

type Entry = Record<string, unknown>;
type SessionMessage = { role?: string; timestamp?: number; toolCallId?: string; content?: Array<{ type: string; text?: string }> };

/**
 * The original text of an occurrence key `${toolCallId}@${assistantTimestamp}#${n}` from the
 * session file's raw messages: the result answering the n-th same-id call of that assistant.
 */
export function originalFromSession(entries: Entry[], ref: string): string | undefined {
  const m = /^(.*)@(-?\d+)#(\d+)$/.exec(ref);
  if (!m) return undefined;
  const [, id, ts, n] = m;
  const messages = entries.filter((e) => e.type === "message").map((e) => e.message as SessionMessage);
  const a = messages.findIndex((x) => x.role === "assistant" && x.timestamp === Number(ts));
  if (a < 0) return undefined;
  const results = messages.slice(a + 1).filter((x) => x.role === "toolResult" && x.toolCallId === id);
  const r = results[Number(n)];
  return r?.content?.filter((b) => b.type === "text").map((b) => b.text ?? "").join("\n");
}
