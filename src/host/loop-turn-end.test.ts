/**
 * The in-loop trigger through the host: at a `turn_end` inside a long loop whose large early
 * outputs pay to stub, the handler returns the flush's promise (Pi awaits `turn_end`), so by the
 * time Pi builds the next request the flush is committed and that request carries the stubs —
 * the same request the replay has them on. With the trigger off nothing is flushed there.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, thinking, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";

const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);

function fixture(contextKeeper: Record<string, unknown>) {
  const entries: Array<{ customType: string; data: unknown }> = [];
  const branch: Array<{ type: "message"; message: ContextMessage }> = [];
  const pi = { appendEntry: (customType: string, data: unknown) => void entries.push({ customType, data }), getThinkingLevel: () => "medium", getActiveTools: () => ["read"], setActiveTools: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "keeper-loop-"));
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir);
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextKeeper }));
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: () => {}, setStatus: () => {} },
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
    sessionManager: { getBranch: () => branch, buildSessionProjection: () => ({ messages: branch.map((e) => e.message) }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 60_000, contextWindow: 1_000_000, percent: 6 }),
  } as unknown as ExtensionContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  withAgentDir(agentDir, () => host.onSessionStart(ctx));
  // A prompt, four large reads, then sixteen small steps: the loop is still running.
  branch.push({ type: "message", message: user("rework the cache", 1) });
  [40_000, 40_000, 32_000, 36_000, ...Array.from({ length: 16 }, () => 1_500)].forEach((chars, i) => {
    branch.push({ type: "message", message: assistant([thinking(`step ${i}`), call(`c${i}`, "read", { path: `f${i}.ts` })], 2 + 2 * i) });
    branch.push({ type: "message", message: result(`c${i}`, "read", lines(`f${i}`, chars), 3 + 2 * i) });
  });
  const messages = () => branch.map((e) => e.message);
  return { host, ctx, entries, messages };
}

describe("the in-loop trigger at turn_end (host)", () => {
  test("Pi waits for the flush: the next request carries the stubs of the loop's large early outputs", async () => {
    const { host, ctx, entries, messages } = fixture({});
    const before = messages();
    const sent = host.onContext({ messages: before }, ctx)?.messages ?? before;
    expect(JSON.stringify(sent)).not.toContain("output pruned");
    const waiting = host.fire("turn_end", { outcome: "completed", entries: [] }, ctx);
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(entries.some((e) => e.customType === "context-keeper/flush")).toBe(true);
    const next = host.onContext({ messages: messages() }, ctx)!.messages;
    const stubbed = next.filter((m) => m.role === "toolResult" && JSON.stringify(m.content).includes("output pruned"));
    expect(stubbed.length).toBeGreaterThanOrEqual(4);
    // The loop's assistant turns go back as they were.
    messages().forEach((m, i) => {
      if (m.role === "assistant") expect(next[i]).toBe(m);
    });
  });

  test("with the trigger off, turn_end flushes nothing inside the loop", async () => {
    const { host, ctx, entries } = fixture({ pruning: { loopFlush: { enabled: false } } });
    await host.fire("turn_end", { outcome: "completed", entries: [] }, ctx);
    expect(entries.filter((e) => e.customType === "context-keeper/flush")).toEqual([]);
  });
});
