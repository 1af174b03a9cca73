/**
 * The grid over the recorded session: flush at every final answer (an assistant message that
 * stops without tool calls), quantize the frozen boundary from the persisted timestamp, and
 * count how often it moves compared with an unquantized "all but the last 4" window.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { closedCuts } from "./closed-cuts.ts";
import { cutFromTimestamp, quantizeBranchBoundary, type BoundaryUnit } from "./quantize.ts";
import { isAssistant, toolCallsOf, type ContextMessage } from "../session/messages.ts";

const CORPUS = join(import.meta.dir, "../../corpus/large-session.jsonl");

function load(): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const line of readFileSync(CORPUS, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { type: string; message?: ContextMessage };
    if (entry.type === "message" && entry.message) out.push(entry.message);
  }
  return out;
}

const charsOf = (m: ContextMessage): number => JSON.stringify((m as { content?: unknown }).content ?? "").length;

function replay(messages: ContextMessage[], unit: BoundaryUnit) {
  let persisted: number | undefined;
  let moves = 0;
  let flushes = 0;
  let naiveMoves = 0;
  let lastNaive = -1;
  let lastCut = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isAssistant(m) || toolCallsOf(m).length > 0) continue;
    flushes++;
    const branch = messages.slice(0, i + 1);
    const q = quantizeBranchBoundary({ messages: branch, unit, previousFrozenThroughTimestamp: persisted });
    if (q.moved) {
      moves++;
      expect(closedCuts(branch)[q.cut!]).toBe(true);
      expect(q.cut!).toBeGreaterThan(lastCut);
      lastCut = q.cut!;
    }
    if (persisted !== undefined) expect(cutFromTimestamp(branch, q.frozenThroughTimestamp!)).toBeGreaterThanOrEqual(cutFromTimestamp(branch, persisted));
    persisted = q.frozenThroughTimestamp;
    const naive = Math.max(0, branch.length - 4);
    if (naive !== lastNaive) naiveMoves++;
    lastNaive = naive;
  }
  return { moves, flushes, naiveMoves, messages: messages.length, finalCut: lastCut };
}

describe("grid over the recorded session", () => {
  const messages = load();
  test("messages unit (keepTail 4, chunk 50): moves at most once per 50 messages", () => {
    const r = replay(messages, { kind: "messages", keepTail: 4, chunk: 50 });
    expect(r.flushes).toBeGreaterThan(5);
    expect(r.moves).toBeGreaterThan(0);
    expect(r.moves).toBeLessThanOrEqual(Math.floor((r.messages - 4) / 50));
    expect(r.moves).toBeLessThan(r.naiveMoves);
  });
  test("tokens unit (keep 20k, chunk 20k, chars/4): moves at most once per 20k tokens", () => {
    const total = messages.reduce((s, m) => s + charsOf(m) / 4, 0);
    const r = replay(messages, { kind: "tokens", keepTailTokens: 20_000, chunkTokens: 20_000, tokensOf: (m) => charsOf(m) / 4 });
    expect(r.moves).toBeGreaterThan(0);
    expect(r.moves).toBeLessThanOrEqual(Math.floor((total - 20_000) / 20_000));
  });
});
