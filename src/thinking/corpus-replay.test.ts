/**
 * Replay of the recorded session: every assistant message gets a signed thinking block (the
 * recording was made with thinking off), the context is rendered before each assistant
 * message, and a flush happens at the end of each request (an assistant message that stops
 * without tool calls). Counts the renders whose previously-sent messages changed.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { stripOldThinking } from "./strip.ts";
import { boundaryAtFlush, boundaryForRender } from "./boundary.ts";
import type { ContextMessage } from "../session/messages.ts";

const CORPUS = join(import.meta.dir, "../../corpus/large-session.jsonl");

function loadWithThinking(): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const line of readFileSync(CORPUS, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { type: string; message?: ContextMessage };
    if (entry.type !== "message" || !entry.message) continue;
    const m = entry.message as AssistantMessage;
    if (m.role === "assistant" && !m.content.some((b) => b.type === "thinking")) {
      out.push({ ...m, content: [{ type: "thinking", thinking: `reasoning ${m.timestamp}`, thinkingSignature: `sig-${m.timestamp}` }, ...m.content] });
    } else out.push(m);
  }
  return out;
}

function isPrefixOf(previous: ContextMessage[], next: ContextMessage[]): boolean {
  if (next.length < previous.length) return false;
  for (let i = 0; i < previous.length; i++) {
    if (previous[i] !== next[i] && JSON.stringify(previous[i]) !== JSON.stringify(next[i])) return false;
  }
  return true;
}

interface ReplayStats {
  renders: number;
  flushes: number;
  /** Renders whose previous render was not a prefix of them. */
  rewrites: number;
  /** Rewrites at a render that directly follows a flush. */
  rewritesAfterFlush: number;
}

type Mode = "flush-gated" | "flush-gated, raw undefined" | "live count";

function replay(messages: ContextMessage[], keepLastTurns: number, mode: Mode): ReplayStats {
  const stats: ReplayStats = { renders: 0, flushes: 0, rewrites: 0, rewritesAfterFlush: 0 };
  let boundary: number | undefined;
  let previous: ContextMessage[] | undefined;
  let flushedSinceLastRender = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    // render: the context sent to produce message i
    const renderBoundary =
      mode === "flush-gated"
        ? boundaryForRender({ persisted: boundary, hasFlushed: stats.flushes > 0 })
        : mode === "flush-gated, raw undefined"
          ? boundary
          : undefined;
    const sent = stripOldThinking(messages.slice(0, i), { enabled: true, keepLastTurns }, renderBoundary);
    stats.renders++;
    if (previous && !isPrefixOf(previous, sent)) {
      stats.rewrites++;
      if (flushedSinceLastRender) stats.rewritesAfterFlush++;
    }
    previous = sent;
    flushedSinceLastRender = false;
    // the reply arrives; a reply without tool calls ends the request and flushes
    if (!m.content.some((b) => b.type === "toolCall")) {
      boundary = boundaryAtFlush({ branchMessages: messages.slice(0, i), closingMessage: m, keepLastTurns, prev: boundary });
      stats.flushes++;
      flushedSinceLastRender = true;
    }
  }
  return stats;
}

describe("replay of the recorded session", () => {
  const messages = loadWithThinking();

  test.each([4, 16])("keepLastTurns %i: flush-gated rewrites history only at the first render after a flush", (keep) => {
    const gated = replay(messages, keep, "flush-gated");
    const live = replay(messages, keep, "live count");
    expect(gated.renders).toBeGreaterThan(400);
    // every rewrite lands on the first render after a flush: never inside a tool loop
    expect(gated.rewrites).toBe(gated.rewritesAfterFlush);
    expect(gated.rewrites).toBeLessThanOrEqual(gated.flushes);
    // the per-render live count rewrites inside tool loops too
    expect(live.rewrites).toBeGreaterThan(live.rewritesAfterFlush);
    expect(live.rewrites).toBeGreaterThan(gated.rewrites);
  });

  test("passing the raw undefined boundary after early flushes falls back to the sliding live count", () => {
    // The first flushes see at most 16 assistant messages, so the boundary stays undefined and
    // the live count slides inside the long tool loops that follow: boundaryForRender exists
    // to turn that into "strip nothing".
    const raw = replay(messages, 16, "flush-gated, raw undefined");
    expect(raw.rewrites).toBeGreaterThan(raw.rewritesAfterFlush);
  });
});
