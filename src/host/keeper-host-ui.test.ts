/**
 * The ui pieces as the host wires them: the status line follows every render, the rewrite
 * tally counts a cold re-plan and the requests after it for `/keeper cache`, `/keeper off|on`
 * switch the host over mid-session, and the one `/keeper` registration carries completions.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, text, thinking, user } from "../../test/support/message-factory.ts";
import { registerKeeper } from "./hooks.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { formatTokenCount } from "../ui/status-line.ts";
import { prunedTokens, STATUS_LINE_KEY } from "./status-runtime.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";

const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // `auto` strips old thinking

function fixture() {
  const appended: string[] = [];
  const active: string[] = ["read"];
  const pi = {
    appendEntry: (customType: string) => void appended.push(customType),
    getThinkingLevel: () => "high",
    getActiveTools: () => [...active],
    setActiveTools: (names: string[]) => void active.splice(0, active.length, ...names),
  };
  const statuses: Array<string | undefined> = [];
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "keeper-host-ui-"));
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: (t: string) => void notes.push(t), setStatus: (key: string, t: string | undefined) => key === STATUS_LINE_KEY && statuses.push(t) },
    model: OPUS,
    modelRegistry: { getAvailable: () => [OPUS] },
    sessionManager: { getBranch: () => [], buildSessionProjection: () => ({ messages: [] }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000, percent: 5 }),
  } as unknown as ExtensionCommandContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  withAgentDir(join(dir, "agent"), () => host.onSessionStart(ctx));
  return { host, ctx, appended, statuses, notes, active };
}

// Twenty answered prompts with long thinking, then a new prompt: the first request of this process is cold.
const messages: ContextMessage[] = [];
for (let p = 0; p < 20; p++) messages.push(user(`p${p}`, 10 * p + 1), assistant([thinking(`why ${p} `.repeat(400)), text(`answer ${p}`)], 10 * p + 2));
messages.push(user("last", 201));

const request = { type: "before_provider_request", payload: { model: "x", messages: [{ role: "user", content: "last" }] } } as never;

describe("the host's ui wiring", () => {
  test("the status line shows Pi's context and what the render keeps out, at the render itself", () => {
    const { host, ctx, statuses } = fixture();
    expect(statuses.at(-1)).toBe("keeper: 10k ctx · nothing pruned yet");
    const out = host.onContext({ type: "context", messages } as never, ctx);
    // Four stripped thinking blocks of a few hundred tokens each.
    const removed = prunedTokens(messages, out!.messages);
    expect(removed).toBeGreaterThan(2000);
    expect(statuses.at(-1)).toBe(`keeper: 10k ctx · −${formatTokenCount(removed)} pruned`);
  });

  test("/keeper cache: the cold re-plan's rewrite is tallied and placed on the request that carried it", async () => {
    const { host, ctx, notes, appended } = fixture();
    host.onContext({ type: "context", messages } as never, ctx);
    host.onBeforeProviderRequest(request, ctx);
    expect(appended.length).toBeGreaterThan(0);
    await host.onKeeperCommand("cache", ctx);
    const first = notes.at(-1)!;
    expect(first).toContain("one request sent so far");
    expect(first).toContain("changed history already sent 1 time in this session");
    expect(first).toContain("1 went out with the first request (nothing to compare with)");
    host.onContext({ type: "context", messages } as never, ctx);
    host.onBeforeProviderRequest(request, ctx);
    await host.onKeeperCommand("cache", ctx);
    expect(notes.at(-1)).toContain("each of the 2 requests so far extended the one before");
  });

  test("/keeper off and on switch the host over mid-session; the status line says so", async () => {
    const { host, ctx, statuses, notes, active } = fixture();
    expect(active).toContain("keeper_recall");
    await host.onKeeperCommand("off", ctx);
    expect(host.settings().enabled).toBe(false);
    expect(notes.at(-1)).toContain("enabled = false for this session");
    expect(statuses.at(-1)).toBe("keeper: off");
    expect(active).toEqual(["read"]);
    expect(host.onContext({ type: "context", messages } as never, ctx)).toBeUndefined();
    await host.onKeeperCommand("on", ctx);
    expect(host.settings().enabled).toBe(true);
    expect(active).toEqual(["read", "keeper_recall"]);
    expect(host.onContext({ type: "context", messages } as never, ctx)).toBeDefined();
    await host.onKeeperCommand("reset", ctx);
    expect(notes.at(-1)).toContain("every session override dropped");
  });

  test("the single /keeper registration completes subcommands and setting keys", () => {
    const commands: Array<{ name: string; options: { getArgumentCompletions?: (prefix: string) => Array<{ value: string }> | null } }> = [];
    const base = {
      on: () => {},
      registerCommand: (name: string, options: never) => void commands.push({ name, options }),
      registerTool: () => {},
      getActiveTools: () => [],
      setActiveTools: () => {},
      getThinkingLevel: () => "off",
      appendEntry: () => {},
    };
    const pi = new Proxy(base, { get: (t, p) => (p in t ? t[p as keyof typeof t] : () => undefined) }) as unknown as ExtensionAPI;
    registerKeeper(pi, { compaction: { env: {} } });
    const keeper = commands.filter((c) => c.name === "keeper");
    expect(keeper.length).toBe(1);
    const complete = keeper[0]!.options.getArgumentCompletions!;
    expect(complete("se")!.map((i) => i.value)).toEqual(["set "]);
    expect(complete("set thinkingStrip.keepL")!.map((i) => i.value)).toContain("set thinkingStrip.keepLastTurns ");
  });
});
