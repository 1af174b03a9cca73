import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSessionEntries, SessionManager, type SessionMessageEntry } from "@earendil-works/pi-coding-agent";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { serializeForAnthropic } from "./anthropic-wire.ts";
import { replaySession } from "./replay.ts";
import { convertToLlm } from "@earendil-works/pi-coding-agent";

const CORPUS = join(import.meta.dir, "../../corpus/large-session.jsonl");
const replay = replaySession({ file: CORPUS });

const texts = (c: unknown): string[] =>
  typeof c === "string" ? [c] : (c as Array<{ type: string; text?: string }>).filter((b) => b.type === "text").map((b) => b.text ?? "");

describe("corpus replay: reconstruction", () => {
  test("one request per billed assistant message", () => {
    // 453 assistant messages: 14 aborted before any usage was recorded (one of them from gpt-5.1-codex).
    expect(replay.requests).toHaveLength(439);
    expect(replay.skipped).toEqual({ unbilled: 14 });
    expect(replay.userPrompts).toBe(88);
  });

  test("request 0: '/mode', the aborted gpt answer is dropped, then the prompt (marked)", () => {
    const m = replay.requests[0].body.messages;
    expect(m.map((x) => x.role)).toEqual(["user", "user"]);
    expect(texts(m[0].content)).toEqual(["/mode"]);
    expect(texts(m[1].content)[0]).toStartWith("read packages/coding-agent/docs/theme.md in full");
    const last = (m[1].content as Array<{ cache_control?: unknown }>).at(-1);
    expect(last?.cache_control).toEqual({ type: "ephemeral" });
  });

  test("request 1: assistant text + 3 tool calls, their 3 results merged into one user message", () => {
    const m = replay.requests[1].body.messages;
    expect(m.map((x) => x.role)).toEqual(["user", "user", "assistant", "user"]);
    const calls = (m[2].content as Array<{ type: string; id?: string }>).filter((b) => b.type === "tool_use");
    const results = m[3].content as Array<{ type: string; tool_use_id?: string; cache_control?: unknown }>;
    expect(calls).toHaveLength(3);
    expect(results.map((r) => r.type)).toEqual(["tool_result", "tool_result", "tool_result"]);
    expect(results.map((r) => r.tool_use_id)).toEqual(calls.map((c) => c.id));
    expect(results[2].cache_control).toBeDefined();
    expect(results[0].cache_control).toBeUndefined();
  });

  test("matches Pi's SessionManager.buildSessionContext at sampled request points", () => {
    const sm = SessionManager.inMemory("/tmp", undefined, parseSessionEntries(readFileSync(CORPUS, "utf8")));
    const assistants = sm
      .getEntries()
      .filter((e): e is SessionMessageEntry => e.type === "message" && (e.message as { role: string }).role === "assistant");
    for (const i of [0, 1, 57, 150, 209, 300, replay.requests.length - 1]) {
      const req = replay.requests[i];
      const entry = assistants.find((e) => (e.message as { timestamp: number }).timestamp === req.timestamp)!;
      sm.branch(entry.parentId!);
      const ctx = sm.buildSessionContext();
      expect(ctx.messages.length).toBe(req.contextMessages);
      const a = entry.message as { provider: string; api: string; model: string };
      const rebuilt = serializeForAnthropic(convertToLlm(ctx.messages as AgentMessage[]), {
        model: { provider: a.provider, api: a.api, id: a.model },
        unknownPrompt: { toolsText: "t", systemText: "s" },
      });
      expect(rebuilt.messages).toEqual(req.body.messages);
    }
  });

  test("every rebuilt request pairs tool calls with results and has 3 marks", () => {
    expect(replay.summary.pairingViolations).toBe(0);
    // placeholder tool, placeholder system, last message block; the one out-of-order request
    // (context ends with an assistant message) has only the first two.
    const marks = replay.analysis.map((a) => a.markCount);
    expect(marks.filter((n) => n !== 3)).toEqual([2]);
    expect(replay.diagnostics.map((d) => d.line)).toEqual([466]);
  });
});

describe("corpus replay: calibration", () => {
  test("total error within 10% with external invalidations replayed", () => {
    expect(replay.calibration.total_error).toBeLessThanOrEqual(0.1);
    expect(replay.calibration.prompt_size_error).toBeLessThanOrEqual(0.1);
  });
  test("external invalidations are found after in-TTL prompt-cache misses", () => {
    expect(replay.externalInvalidations.length).toBeGreaterThan(0);
    for (const i of replay.externalInvalidations) {
      const prev = replay.requests[i - 1].recorded;
      expect(replay.requests[i].recorded.cacheRead).toBeLessThan(0.5 * (prev.input + prev.cacheRead + prev.cacheWrite));
      expect(replay.analysis[i].invalidated).toBe(true);
    }
  });
  test("TTL-only replay is reported and is worse (it reads what the provider did not)", () => {
    expect(replay.calibration.total_error_ttl_only).toBeGreaterThan(replay.calibration.total_error);
    expect(replay.calibration.ttlOnly.read.simulated).toBeGreaterThan(replay.calibration.read.simulated);
  });
});

describe("render-arm hook", () => {
  test("transformContext sees each request's context and its output is serialized", () => {
    const seen: number[] = [];
    const r = replaySession({
      file: CORPUS,
      transformContext: (messages, i) => {
        seen.push(i);
        return messages.slice(-1);
      },
    });
    expect(seen).toEqual(r.requests.map((_, i) => i));
    expect(r.requests.every((q) => q.contextMessages === 1)).toBe(true);
  });
});
