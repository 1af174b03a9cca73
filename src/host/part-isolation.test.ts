/**
 * Each part isolated, through the handlers `registerKeeper` gives Pi: a part that throws (for
 * real: what it reads of Pi throws) is reported once, however many events it fails at; the
 * other parts still run for the same event; the handler returns normally (Pi keeps going).
 * The thinking strip fails inside the engine's render (src/engine/part-faults.test.ts has the
 * render's own guards); here its throw comes from a message it reads and no other part does.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { LifecycleEvent } from "../compaction/lifecycle.ts";
import type { ContextMessage } from "../session/messages.ts";
import { CUSTOM_TYPE_FLUSH } from "../state/schema.ts";
import { assistant, text, thinking, user } from "../../test/support/message-factory.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";
import { registerKeeper } from "./hooks.ts";

const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages", contextWindow: 200_000, maxTokens: 32_000 }; // `auto` strips old thinking

type Handler = (event: unknown, ctx: ExtensionContext) => unknown;

/** The keeper registered on a fake Pi, with a fake context whose readings a test can make throw. */
function registered() {
  const handlers = new Map<string, Handler>();
  const appended: string[] = [];
  const notices: string[] = [];
  const statuses: string[] = [];
  const events: LifecycleEvent[] = [];
  const throwing = new Set<string>();
  const boom = (what: string) => {
    if (throwing.has(what)) throw new Error(`${what} broke`);
  };
  let activeTools = 0;
  let tokens = 10_000;
  const pi = {
    on: (event: string, handler: Handler) => {
      expect(handlers.has(event)).toBe(false);
      handlers.set(event, handler);
    },
    registerTool: () => {},
    registerCommand: () => {},
    appendEntry: (customType: string) => void appended.push(customType),
    sendUserMessage: () => {},
    getThinkingLevel: () => "high",
    getActiveTools: () => (boom("getActiveTools"), ["read"]),
    setActiveTools: () => void activeTools++,
  } as unknown as ExtensionAPI;
  const dir = mkdtempSync(join(tmpdir(), "part-isolation-"));
  const ctx = {
    get cwd() {
      boom("cwd");
      return dir;
    },
    isProjectTrusted: () => (boom("isProjectTrusted"), false),
    hasUI: true,
    ui: { notify: (text: string) => void notices.push(text), setStatus: (key: string) => (boom("setStatus"), void statuses.push(key)) },
    model: OPUS,
    thinkingLevel: "high",
    isIdle: () => false,
    hasPendingMessages: () => false,
    sessionManager: {
      getBranch: () => [],
      getSessionId: () => "s1",
      buildSessionProjection: () => ({ messages: [] }),
      getSessionFile: () => (boom("getSessionFile"), undefined),
    },
    getContextUsage: () => ({ tokens, contextWindow: 200_000, percent: (100 * tokens) / 200_000 }),
  } as unknown as ExtensionContext;
  const { keeper } = registerKeeper(pi, { compaction: { env: {}, onLifecycleEvent: (e) => events.push(e) } });
  const fire = (event: string, payload: unknown = {}) => withAgentDir(join(dir, "agent"), () => handlers.get(event)!(payload, ctx));
  return { keeper, fire, throwing, appended, notices, statuses, events, activeTools: () => activeTools, setTokens: (t: number) => void (tokens = t) };
}

const faultsIn = (notices: readonly string[]) => notices.filter((n) => / failed at /.test(n));

// Twenty answered prompts with thinking, then a new one: the first request of this process is cold, and re-plans.
const messages: ContextMessage[] = [];
for (let p = 0; p < 20; p++) messages.push(user(`p${p}`, 10 * p + 1), assistant([thinking(`why ${p} `.repeat(50)), text(`answer ${p}`)], 10 * p + 2));
messages.push(user("last", 201));

describe("each part isolated", () => {
  test("settings: reading the settings files throws at session start; restore, status line and compaction still run", async () => {
    const r = registered();
    r.throwing.add("isProjectTrusted");
    await r.fire("session_start", { reason: "startup" });
    await r.fire("session_start", { reason: "reload" });
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("settings failed at session_start (isProjectTrusted broke)")]);
    expect(r.activeTools()).toBe(2); // the pruning part activated keeper_recall each time (defaults apply)
    expect(r.statuses.length).toBeGreaterThan(0); // the ui part drew the status line
  });

  test("pruning: its render step throws; the status line still follows, Pi sends the messages as they are", async () => {
    const r = registered();
    await r.fire("session_start", { reason: "startup" });
    r.throwing.add("getSessionFile");
    const before = r.statuses.length;
    expect(await r.fire("context_with_system", { messages })).toBeUndefined();
    expect(await r.fire("context_with_system", { messages })).toBeUndefined();
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("pruning failed at context_with_system (getSessionFile broke)")]);
    expect(r.statuses.length).toBe(before + 2);
  });

  test("thinking: the strip throws on what only it reads; the render goes on without it, reported once", async () => {
    const r = registered();
    await r.fire("session_start", { reason: "startup" });
    // `api` is read by the thinking strip alone (which APIs keep their reasoning).
    const odd = messages.map((m, i) => (i === 1 ? Object.defineProperty({ ...m }, "api", { get: () => { throw new Error("api unreadable"); } }) : m)) as ContextMessage[];
    const first = (await r.fire("context_with_system", { messages: odd })) as { messages: ContextMessage[] } | undefined;
    await r.fire("context_with_system", { messages: odd });
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("thinking failed at context (api unreadable)")]);
    expect(first?.messages ?? odd).toHaveLength(odd.length);
  });

  test("cache: its request step throws; the cold re-plan the render adopted is still committed", async () => {
    const r = registered();
    await r.fire("session_start", { reason: "startup" });
    const out = (await r.fire("context_with_system", { messages })) as { messages: ContextMessage[] } | undefined;
    expect(out).toBeDefined(); // the cold re-plan stripped old thinking
    r.throwing.add("getActiveTools");
    expect(await r.fire("before_provider_request", { payload: { model: "x", messages: [] } })).toBeUndefined();
    expect(await r.fire("before_provider_request", { payload: { model: "x", messages: [] } })).toBeUndefined();
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("cache failed at before_provider_request (getActiveTools broke)")]);
    expect(r.appended).toEqual([CUSTOM_TYPE_FLUSH]);
  });

  test("compaction: its turn-end step throws; the status line and the budget flush still run", async () => {
    const r = registered();
    await r.fire("session_start", { reason: "startup" });
    r.throwing.add("cwd"); // Pi's compaction settings are read from the project's folder
    r.setTokens(150_000);
    const before = r.statuses.length;
    expect(await r.fire("turn_end", { outcome: "completed", entries: [] })).toBeUndefined();
    expect(r.keeper.busy()).toBe(true); // 150k of 200k: the budget flush started
    expect(await r.fire("turn_end", { outcome: "completed", entries: [] })).toBeUndefined();
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("compaction failed at turn_end (cwd broke)")]);
    expect(r.statuses.length).toBeGreaterThanOrEqual(before + 2); // the ui part drew the status line at both (the flush too)
    await r.fire("session_shutdown");
  });

  test("ui: the status line throws at a turn end; the budget flush and compaction still run", async () => {
    const r = registered();
    await r.fire("session_start", { reason: "startup" });
    r.throwing.add("setStatus");
    r.setTokens(150_000);
    expect(await r.fire("turn_end", { outcome: "completed", entries: [] })).toBeUndefined();
    expect(r.keeper.busy()).toBe(true);
    expect(await r.fire("turn_end", { outcome: "completed", entries: [] })).toBeUndefined();
    expect(faultsIn(r.notices)).toEqual([expect.stringContaining("ui failed at turn_end (setStatus broke)")]);
    // Compaction looked at the context at both turn ends (below its adaptive start window: skipped).
    expect(r.events.filter((e) => e.kind === "skipped")).toHaveLength(2);
    await r.fire("session_shutdown");
  });
});
