/**
 * The host registers each Pi event once, compaction's included, and fans out in its stated
 * order. A recording fake `pi` stands in for Pi; a recording keeper shows who ran first.
 */
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { fanOut } from "./event-hub.ts";
import { registerKeeper } from "./hooks.ts";
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
      ui: { ...real.ui, refresh: () => {} },
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
    for (const e of ["session_start", "session_tree", "session_compact", "session_shutdown", "context", "message_end", "turn_end", "before_provider_request", "cache_warming_decision"])
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

describe("the keeper host sees compaction's outlook", () => {
  const outlookSeen = (env: Record<string, string>) => {
    let options: KeeperHostOptions | undefined;
    const { pi } = recordingPi();
    registerKeeper(pi, {
      compaction: { env },
      createHost: (p, hostOptions) => {
        options = hostOptions;
        return createKeeperHost(p, hostOptions);
      },
    });
    return options?.compactionOutlook?.();
  };
  test("compaction on: the registered controller's outlook (no job, no handoff yet)", () => {
    expect(outlookSeen({})).toEqual({ job: "none", handoffs: 0 });
  });
  test("compaction off: none", () => {
    expect(outlookSeen({ PI_ASYNC_PREFIX_COMPACTION: "0" })).toBeUndefined();
  });
});

describe("fan-out order", () => {
  test("turn_end: the keeper's budget check, then compaction", async () => {
    const log: string[] = [];
    const { pi, fire } = recordingPi();
    registerKeeper(pi, { compaction: { env: {} }, createHost: recordingKeeper(log) });
    await Promise.all(fire("turn_end", { outcome: "completed", entries: [] }, ctx));
    expect(log).toEqual(["keeper: turn_end", "compaction: isActive → keeper.settings()"]);
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

describe("fanOut", () => {
  test("runs in order, awaits a promise before the next step, returns the last defined result", async () => {
    const order: string[] = [];
    const sync = fanOut([() => void order.push("a"), () => (order.push("b"), { draft: 1 }), () => void order.push("c")]);
    expect(sync).toEqual({ draft: 1 });
    const later = fanOut([
      async () => {
        await new Promise((r) => setTimeout(r, 5));
        order.push("d");
      },
      () => (order.push("e"), "result"),
    ]);
    expect(order).toEqual(["a", "b", "c"]);
    expect(await later).toBe("result");
    expect(order).toEqual(["a", "b", "c", "d", "e"]);
  });
});
