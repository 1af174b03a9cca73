/**
 * Helpers for the async compaction wire tests (`test/e2e/compaction*.test.ts`): the scripted session,
 * the side router with a delayed summary, and readers for the wire, the session file and the
 * lifecycle trace.
 */
import { existsSync, readFileSync } from "node:fs";
import { convertToLlm } from "@earendil-works/pi-coding-agent";
import type { MainScript, MainStep, RecordedRequest, SideRouter, WireBlock, WireMessage } from "../fake-anthropic/index.ts";
import { PI_SUMMARIZATION_PROMPT_START, systemText } from "../fake-anthropic/index.ts";
import type { RpcRecord } from "../pi-runner.ts";
import type { SandboxFiles } from "../scenario.ts";

export const SUMMARY_DELAY_MS = 2_000;
export const STATUS_KEY = "async-compaction:pi-default";
export const READY_ENTRY = "context-keeper/async-compaction-ready";
export const MARKER = "contextKeeperAsyncCompaction";

/**
 * Pi and model settings shared by the runs. Arithmetic (fake usage = chars/4 of the request):
 * a request carries ~1,295 tokens of system prompt and tools, and each `read` of one sandbox
 * file (100 lines × 92 chars ≈ 9.2k chars) adds ~2,394. At the turn_end after main request k,
 * Pi's usage figure is ≈ 1,295 + 2,394·k (that request) + ~2,330 (its tool result) ≈ 3,630 + 2,394·k.
 *   start   = floor(40,000 × 0.55) = 22,000  → first crossed at k = 8 (≈ 22,780; k = 7 ≈ 20,390)
 *   Pi sync = 40,000 − 8,000       = 32,000  → first crossed at k = 12 (≈ 32,360; k = 11 ≈ 29,970)
 */
export const WIRE_SETUP = {
  model: { contextWindow: 40_000 },
  settings: { compaction: { enabled: true, reserveTokens: 8_000, keepRecentTokens: 6_000 } },
  // Only the compaction subsystem acts on the wire (pruning would rewrite the kept tail).
  contextKeeper: { pruning: { enabled: false }, thinkingStrip: { mode: "off" } },
  startRatio: "0.55",
};

/** `count` files of exactly 100 lines × 92 characters. */
export function sandboxFiles(count: number): SandboxFiles {
  const files: SandboxFiles = {};
  for (let i = 0; i < count; i++) {
    const lines = Array.from({ length: 100 }, (_, j) => `line ${String(j).padStart(3, "0")} of file ${String(i).padStart(2, "0")}: ${"lorem ipsum dolor ".repeat(4)}`);
    files[`data/f${String(i).padStart(2, "0")}.txt`] = lines.join("\n");
  }
  return files;
}

/** One `read` per step; `delays[k]` is how long the server waits before answering main request k. */
export function readSteps(delays: number[]): MainStep[] {
  return delays.map((delayMs, k) => ({
    thinking: `Step ${k}: read the next data file.`,
    toolCalls: [{ name: "read", input: { path: `data/f${String(k).padStart(2, "0")}.txt` } }],
    delayMs,
  }));
}

/** A step's thinking: `label`'s plan, padded to about `chars` characters with text that differs at every step. */
export function thinkingOf(label: string, chars: number): string {
  const head = `${label}: read the next data file.`;
  if (chars <= head.length) return head;
  const words = Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `consider part ${i} of ${label.toLowerCase()} before the next read`);
  return `${head} ${words.join("; ")}`.slice(0, chars);
}

export const summaryText = (n: number) => `## Goal\nDelayed scripted summary #${n}.\n\n## Progress\n- read the data files`;

/** Pi's compaction prompt is answered after `SUMMARY_DELAY_MS`. */
export const delayedSummaryRouter: SideRouter = ({ request, kindIndex }) =>
  systemText(request.body).includes(PI_SUMMARIZATION_PROMPT_START)
    ? { text: summaryText(kindIndex), delayMs: SUMMARY_DELAY_MS }
    : { text: `side answer #${kindIndex}` };

/** Pi's text around a compaction summary in the messages it sends (`COMPACTION_SUMMARY_PREFIX`). */
const COMPACTED_MARK = "compacted into the following summary";

/**
 * A job that is late whatever the machine's speed: `steps` as the main script, and
 * `delayedSummaryRouter`'s answers, except that the first summary request is held until a main
 * request shows that Pi compacted without it (it carries a compaction summary: the keeper's
 * digest), or `maxWaitMs` passed. With the fixed delay alone, whether the job was late depended
 * on how fast the loop reached Pi's threshold: on a loaded machine the summary came first and no
 * digest was needed. `pauseAfterCompaction`: that first compacted request is also answered only
 * after `resume()` (or `maxWaitMs`), so that a terminal test reads the notice before the loop
 * goes on (a later compaction redraws Pi's chat and takes the notice with it).
 */
export function lateSummaryWire(
  steps: readonly MainStep[],
  options: { maxWaitMs?: number; pauseAfterCompaction?: boolean } = {},
): { script: MainScript; sideRouter: SideRouter; resume: () => void } {
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const signal = () => {
    let fire: () => void = () => {};
    const fired = new Promise<void>((resolve) => (fire = resolve));
    const wait = async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([fired, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
      clearTimeout(timer);
    };
    return { fire, wait };
  };
  const compacted = signal();
  const resumed = signal();
  let cursor = 0;
  let held = false;
  let paused = false;
  const script: MainScript = async ({ request }) => {
    const step = steps[cursor++] ?? { text: "(the script is over)" };
    if (!request.raw.includes(COMPACTED_MARK)) return step;
    compacted.fire();
    if (options.pauseAfterCompaction && !paused) {
      paused = true;
      await resumed.wait();
    }
    return step;
  };
  const sideRouter: SideRouter = async (ctx) => {
    const answer = await delayedSummaryRouter(ctx);
    if (held || !systemText(ctx.request.body).includes(PI_SUMMARIZATION_PROMPT_START)) return answer;
    held = true;
    await compacted.wait();
    return answer;
  };
  return { script, sideRouter, resume: resumed.fire };
}

type Entry = Record<string, unknown> & { type: string; id: string };
type Msg = { role: string; content?: unknown; stopReason?: string; toolCallId?: string };

/** Block-level identity of a wire message list (merging of adjacent user turns does not matter). */
export function wireFingerprints(messages: WireMessage[]): string[] {
  return messages.flatMap((m) => (typeof m.content === "string" ? [`text:${m.content}`] : m.content.map(blockFingerprint)));
}

function blockFingerprint(b: WireBlock): string {
  if (b.type === "text") return `text:${b.text}`;
  if (b.type === "thinking") return `thinking:${b.thinking}`;
  if (b.type === "tool_use") return `tool_use:${b.id}`;
  if (b.type === "tool_result") return `tool_result:${b.tool_use_id}`;
  return `other:${b.type}`;
}

/** The same identity for session message entries, as Pi sends them to Anthropic. */
export function entryFingerprints(entries: Entry[]): string[] {
  return entries.flatMap((e) => {
    if (e.type !== "message") return [];
    const m = e.message as Msg;
    if (m.role === "system") return [];
    if (m.role === "toolResult") return [`tool_result:${m.toolCallId}`];
    if (typeof m.content === "string") return [`text:${m.content}`];
    const blocks = (m.content ?? []) as Array<{ type: string; text?: string; thinking?: string; id?: string }>;
    return blocks.map((b) =>
      b.type === "text" ? `text:${b.text}` : b.type === "thinking" ? `thinking:${b.thinking}` : b.type === "toolCall" ? `tool_use:${b.id}` : `other:${b.type}`,
    );
  });
}

/** Pi's own rendering of a compaction summary as the model sees it (a user text message). */
export function renderedSummary(summary: string): string {
  const [llm] = convertToLlm([{ role: "compactionSummary", summary, tokensBefore: 0, timestamp: 0 } as never]);
  const content = (llm as { content: Array<{ text: string }> }).content;
  return content.map((c) => c.text).join("");
}

export function firstText(m: WireMessage | undefined): string {
  if (!m) return "";
  return typeof m.content === "string" ? m.content : String(m.content.find((b) => b.type === "text")?.text ?? "");
}

export function withoutCacheControl<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === "cache_control" ? undefined : v))) as T;
}

/** Index of the first main request whose context opens with a compaction summary. */
export function firstSummarizedRequest(main: RecordedRequest[], prefix: string): number {
  return main.findIndex((r) => firstText(r.body.messages[0]).startsWith(prefix));
}

/**
 * What the request after a compaction must carry after the summary: the kept entries
 * (`firstKeptEntryId` up to the compaction), then whatever was appended after the compaction
 * before the next assistant reply (a new user prompt, for instance).
 */
export function expectedTail(entries: Entry[], compaction: Entry): string[] {
  const first = entries.findIndex((e) => e.id === compaction.firstKeptEntryId);
  const at = entries.indexOf(compaction);
  const after = entries.slice(at + 1);
  const nextReply = after.findIndex((e) => e.type === "message" && (e.message as Msg).role === "assistant");
  return entryFingerprints([...entries.slice(first, at), ...(nextReply < 0 ? after : after.slice(0, nextReply))]);
}

export const entriesOf = (run: { sessionEntries: Array<Record<string, unknown>> }) => run.sessionEntries as Entry[];
export const compactionsOf = (run: { sessionEntries: Array<Record<string, unknown>> }) => entriesOf(run).filter((e) => e.type === "compaction");
export const markerJobId = (e: Entry) => ((e.details as Record<string, { jobId?: string }> | undefined)?.[MARKER]?.jobId);

/** Assistant messages that did not complete (aborted / error). */
export function brokenReplies(entries: Entry[]): Msg[] {
  return entries.flatMap((e) => (e.type === "message" && ["aborted", "error"].includes(String((e.message as Msg).stopReason)) ? [e.message as Msg] : []));
}

/** Texts the extension put in its status line, in order (undefined = cleared). */
export function statusTexts(records: RpcRecord[]): Array<string | undefined> {
  return records
    .filter((r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === STATUS_KEY)
    .map((r) => (r.statusText === undefined ? undefined : String(r.statusText)));
}

export const isStatus = (text: string | undefined) => (r: RpcRecord) =>
  r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === STATUS_KEY && r.statusText === text;

export type TraceEvent = { at: number; kind: string; jobId?: string; path?: string; outcome?: string; reason?: string; from?: string; to?: string; cause?: string };

export function readTrace(file: string): TraceEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as TraceEvent);
}

/** Problems Pi reported to the RPC client: extension errors and failed command responses. */
export function errorRecords(records: RpcRecord[]): RpcRecord[] {
  return records.filter((r) => r.type === "extension_error" || (r.type === "response" && r.success === false));
}

/**
 * How long compaction held the main loop at the boundary gap ending at main request `b`:
 * that gap, minus the scripted answer delay of the request before it, minus the loop's usual
 * overhead (median of the same figure over every other gap).
 */
export function blockedAtBoundary(main: RecordedRequest[], delays: number[], b: number): { gapMs: number; overheadMs: number; blockedMs: number } {
  const excess = (k: number) => main[k].arrivedAtMs - main[k - 1].arrivedAtMs - (delays[k - 1] ?? 0);
  const others = main.map((_, k) => k).filter((k) => k > 0 && k !== b).map(excess).sort((x, y) => x - y);
  const overheadMs = others[Math.floor(others.length / 2)] ?? 0;
  return { gapMs: main[b].arrivedAtMs - main[b - 1].arrivedAtMs, overheadMs, blockedMs: excess(b) - overheadMs };
}
