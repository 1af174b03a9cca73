/**
 * The budget trigger through the host: `turn_end` reads Pi's context usage and the tokens the
 * host remembered at the last flush, and flushes only when the engine's budget rule
 * (`src/flush/budget-trigger.ts` under the settings) fires — at half the window, then again
 * after a quarter of that threshold of growth.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, text, thinking, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";

const WINDOW = 200_000;

function fixture() {
  const notes: string[] = [];
  const branch: Array<{ type: "message"; message: ContextMessage }> = [];
  let tokens = 0;
  const pi = { appendEntry: () => {}, getThinkingLevel: () => "high", getActiveTools: () => ["read"], setActiveTools: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "keeper-budget-"));
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir);
  // Discipline off: every flush applies what it proposes (here: the thinking boundary), so each one shows in the stats.
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextKeeper: { cache: { discipline: false } } }));
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: (t: string) => void notes.push(t), setStatus: () => {} },
    model: { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }, // `auto` strips old thinking
    sessionManager: { getBranch: () => branch, getEntries: () => branch, buildSessionProjection: () => ({ messages: branch.map((e) => e.message) }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens, contextWindow: WINDOW, percent: (100 * tokens) / WINDOW }),
  } as unknown as ExtensionContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  withAgentDir(agentDir, () => host.onSessionStart(ctx));
  let turn = 0;
  /** A new answered prompt with thinking (so any flush moves the boundary), then turn_end at `at` tokens. */
  const turnEnd = async (at: number) => {
    turn++;
    branch.push({ type: "message", message: user(`p${turn}`, 10 * turn + 1) }, { type: "message", message: assistant([thinking(`why ${turn} `.repeat(40)), text(`a${turn}`)], 10 * turn + 2) });
    tokens = at;
    host.onTurnEnd(ctx);
    await Bun.sleep(30);
  };
  const flushes = async () => {
    notes.length = 0;
    await host.onKeeperCommand("stats", ctx as never);
    const line = /flushes that found something to prune: (\d+)/.exec(notes.join("\n"));
    expect(line).not.toBeNull();
    return Number(line![1]);
  };
  return { turnEnd, flushes };
}

describe("budget trigger at turn_end (host)", () => {
  test("fires at half the window, re-arms after a quarter of that threshold of growth", async () => {
    const { turnEnd, flushes } = fixture();
    await turnEnd(30_000);
    await turnEnd(60_000); // 60k in a 200k window: the old growth rule (a quarter of the window) fired here
    expect(await flushes()).toBe(0);
    await turnEnd(100_000);
    expect(await flushes()).toBe(1);
    await turnEnd(120_000); // 20k since the flush at 100k: under 25k
    expect(await flushes()).toBe(1);
    await turnEnd(125_000);
    expect(await flushes()).toBe(2);
  });
});
