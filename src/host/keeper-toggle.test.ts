/**
 * `/keeper off` → `/keeper set …` → `/keeper on`: the flush after the toggle plans with the
 * settings as they are then (no configuration captured at session start or at the toggle).
 * The e2e twin is test/e2e/keeper-command.test.ts ("/keeper off and /keeper on").
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";
import { frontiersAlong } from "../../test/support/state/flush-entries.ts";

const big = (tag: string) => Array.from({ length: 200 }, (_, i) => `${tag} row ${i}`.padEnd(39, ".")).join("\n");

function fixture() {
  const entries: Array<Record<string, unknown>> = [];
  let id = 0;
  const push = (e: Record<string, unknown>) => void entries.push({ ...e, id: `e${++id}`, parentId: id > 1 ? `e${id - 1}` : null, timestamp: new Date(1_000 + id).toISOString() });
  const pi = {
    appendEntry: (customType: string, data: unknown) => push({ type: "custom", customType, data }),
    getThinkingLevel: () => "off",
    getActiveTools: () => ["read"],
    setActiveTools: () => {},
  };
  const dir = mkdtempSync(join(tmpdir(), "keeper-toggle-"));
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir);
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextKeeper: { cache: { discipline: false }, summarizer: { mode: "extractive" } } }));
  const messages = (): ContextMessage[] => entries.filter((e) => e.type === "message").map((e) => e.message as ContextMessage);
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: () => {}, setStatus: () => {} },
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
    modelRegistry: { getAvailable: () => [] },
    sessionManager: { getBranch: () => entries, buildSessionProjection: () => ({ messages: messages() }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000, percent: 5 }),
  } as unknown as ExtensionCommandContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  withAgentDir(agentDir, () => host.onSessionStart(ctx));
  // A prompt of three reads, answered; a second prompt, answered: the first prompt's chain can collapse.
  const say = (m: ContextMessage) => push({ type: "message", message: m });
  say(user("read them", 1));
  for (let i = 0; i < 3; i++) {
    say(assistant([call(`r${i}`, "read", { path: `r${i}.ts` })], 2 + 2 * i));
    say(result(`r${i}`, "read", big(`r${i}`), 3 + 2 * i));
  }
  say(assistant([text("read")], 10));
  say(user("next", 11));
  say(assistant([text("done")], 12));
  const lastFrontier = () => frontiersAlong(entries).at(-1)?.frontier;
  return { host, ctx, lastFrontier };
}

describe("settings after /keeper off → set → on", () => {
  test("control: with chain compression on, a flush collapses the first prompt's chain", async () => {
    const { host, ctx, lastFrontier } = fixture();
    await host.onKeeperCommand("now", ctx);
    expect(lastFrontier()?.stubbedKeys.length).toBe(3);
    expect(lastFrontier()?.compressedChains.length).toBeGreaterThan(0);
  });

  test("chain compression turned off while the keeper was off: the flush after /keeper on stubs the reads and collapses no chain", async () => {
    const { host, ctx, lastFrontier } = fixture();
    await host.onKeeperCommand("off", ctx);
    await host.onKeeperCommand("set pruning.chainCompression.enabled false", ctx);
    await host.onKeeperCommand("on", ctx);
    expect(host.settings().pruning.chainCompression.enabled).toBe(false);
    await host.onKeeperCommand("now", ctx);
    expect(lastFrontier()?.stubbedKeys.length).toBe(3);
    expect(lastFrontier()?.compressedChains).toEqual([]);
  });
});
