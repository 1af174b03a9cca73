/**
 * The host registers each Pi event once, compaction's included, from one table, and runs the
 * steps in its stated order. A recording fake `pi` stands in for Pi; a recording keeper shows
 * who ran first.
 */
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { piEventTable, registerKeeper } from "./hooks.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions } from "./keeper-host.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

/** A fake `pi` that records registrations; other calls are accepted and do nothing. */
function recordingPi() {
  const registrations: Array<{ event: string; handler: Handler }> = [];
  const commands: string[] = [];
  const tools: string[] = [];
  const base = {
    on: (event: string, handler: Handler) => void registrations.push({ event, handler }),
    registerCommand: (name: string) => void commands.push(name),
    registerTool: (tool: { name: string }) => void tools.push(tool.name),
    getActiveTools: () => [],
    setActiveTools: () => {},
    getThinkingLevel: () => "off",
    appendEntry: () => {},
  };
  const pi = new Proxy(base, { get: (t, p) => (p in t ? t[p as keyof typeof t] : () => undefined) }) as unknown as ExtensionAPI;
  const fire = (event: string, payload: unknown, ctx: unknown) => registrations.filter((r) => r.event === event).map((r) => r.handler(payload, ctx));
  return { pi, registrations, commands, tools, fire };
}

/** A keeper host that logs its parts' calls (and the settings reads compaction's `isActive` makes). */
function recordingKeeper(log: string[]): (pi: ExtensionAPI, options: KeeperHostOptions) => KeeperHost {
  return (pi, options) => {
    const real = createKeeperHost(pi, options);
    return {
      ...real,
      settings: () => {
        log.push("compaction: isActive → keeper.settings()");
        return { ...DEFAULT_SETTINGS, enabled: false };
      },
      setup: { sessionStart: () => void log.push("keeper: session_start") },
      pruning: {
        ...real.pruning,
        sessionStart: () => {},
        turnEnd: () => void log.push("keeper: turn_end"),
        sessionTree: () => void log.push("keeper: session_tree"),
        sessionCompact: () => void log.push("keeper: session_compact"),
        sessionShutdown: async () => void log.push("keeper: session_shutdown"),
      },
      ui: { ...real.ui, refresh: () => {}, recount: () => {} },
    };
  };
}

const ctx = {
  hasUI: false,
  ui: { notify: () => {}, setStatus: () => {} },
  sessionManager: { getSessionId: () => "s", getBranch: () => [], getLeafId: () => null },
  getContextUsage: () => undefined,
} as unknown as ExtensionContext;

describe("one registration per Pi event", () => {
  test("each event once; the keeper's and compaction's events are all there", () => {
    const { pi, registrations, commands, tools } = recordingPi();
    registerKeeper(pi, { compaction: { env: {} } });
    const events = registrations.map((r) => r.event);
    expect(events.length).toBe(new Set(events).size);
    for (const e of ["session_start", "session_tree", "session_compact", "session_shutdown", "context_with_system", "message_end", "turn_end", "before_provider_request", "cache_warming_decision"])
      expect(events).toContain(e);
    // Compaction's own hooks, registered through the host, not by compaction itself.
    for (const e of ["agent_end", "session_before_compact", "session_compact_failed", "model_select", "thinking_level_select"]) expect(events).toContain(e);
    expect(commands.sort()).toEqual(["async-compact-now", "keeper"]);
    expect(tools).toEqual(["keeper_recall"]);
  });

  test("compaction off (PI_ASYNC_PREFIX_COMPACTION=0): only the keeper's events, still once each; the command answers \"disabled\"", () => {
    const { pi, registrations, commands } = recordingPi();
    registerKeeper(pi, { compaction: { env: { PI_ASYNC_PREFIX_COMPACTION: "0" } } });
    const events = registrations.map((r) => r.event);
    expect(events.length).toBe(new Set(events).size);
    expect(events).not.toContain("agent_end");
    expect(commands.sort()).toEqual(["async-compact-now", "keeper"]);
  });
});

describe("one engine state for every part", () => {
  test("compaction's state lives in the keeper's cell: its outlook is the budget trigger's", () => {
    const { pi } = recordingPi();
    const { keeper, compaction } = registerKeeper(pi, { compaction: { env: {} } });
    expect(compaction?.handle.outlook()).toEqual({ job: "none", handoffs: 0 });
    expect(keeper.cell.get().compaction.job).toBe(compaction!.handle.current);
  });
  test("compaction off: no compaction part", () => {
    const { pi } = recordingPi();
    expect(registerKeeper(pi, { compaction: { env: { PI_ASYNC_PREFIX_COMPACTION: "0" } } }).compaction).toBeUndefined();
  });
});

describe("the table: each Pi event's steps, by part, in order", () => {
  test("what runs at each event", () => {
    const { pi } = recordingPi();
    const { keeper, compaction } = registerKeeper(pi, { compaction: { env: {} } });
    const rows = Object.fromEntries(Object.entries(piEventTable(keeper, compaction)).map(([event, steps]) => [event, steps.map((s) => s.part)]));
    expect(rows).toEqual({
      session_start: ["settings", "pruning", "ui", "compaction"],
      session_tree: ["pruning", "ui", "compaction"],
      session_compact: ["pruning", "ui", "compaction"],
      session_shutdown: ["pruning", "compaction"],
      context_with_system: ["pruning", "ui"],
      message_end: ["cache", "pruning", "ui"],
      turn_end: ["ui", "pruning", "compaction"],
      before_provider_request: ["cache", "pruning"],
      cache_warming_decision: ["cache", "compaction"],
      agent_end: ["compaction"],
      session_before_compact: ["compaction"],
      session_compact_failed: ["compaction"],
      model_select: ["compaction"],
      thinking_level_select: ["compaction"],
    });
    // ./core's compaction alone: its own rows only.
    const core = Object.fromEntries(Object.entries(piEventTable(undefined, compaction)).map(([event, steps]) => [event, steps.map((s) => s.part)]));
    expect(Object.values(core).flat().every((p) => p === "compaction")).toBe(true);
    expect(core.cache_warming_decision).toBeUndefined();
  });
});

describe("fan-out order", () => {
  test("turn_end: the keeper's budget check, then compaction", async () => {
    const log: string[] = [];
    const { pi, fire } = recordingPi();
    registerKeeper(pi, { compaction: { env: {} }, createHost: recordingKeeper(log) });
    await Promise.all(fire("turn_end", { outcome: "completed", entries: [] }, ctx));
    expect(log[0]).toBe("keeper: turn_end");
    expect(log.length).toBeGreaterThan(1);
    expect(log.slice(1).every((l) => l === "compaction: isActive → keeper.settings()")).toBe(true);
  });

  test("session_start: the keeper loads settings before compaction asks whether it is active", async () => {
    const log: string[] = [];
    const { pi, fire } = recordingPi();
    registerKeeper(pi, { compaction: { env: {} }, createHost: recordingKeeper(log) });
    await Promise.all(fire("session_start", { reason: "startup" }, ctx));
    expect(log[0]).toBe("keeper: session_start");
    expect(log.slice(1).every((l) => l.startsWith("compaction"))).toBe(true);
    expect(log.length).toBeGreaterThan(1);
  });

  test("session_shutdown: the keeper (still open session) before compaction", async () => {
    const log: string[] = [];
    const { pi, fire } = recordingPi();
    registerKeeper(pi, { compaction: { env: {} }, createHost: recordingKeeper(log) });
    await Promise.all(fire("session_shutdown", {}, ctx));
    expect(log[0]).toBe("keeper: session_shutdown");
    expect(log.slice(1)).toContain("compaction: isActive → keeper.settings()");
  });
});
