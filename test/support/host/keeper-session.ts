/**
 * A keeper host over a session of entries, as Pi runs it: a runtime per Pi process (a second
 * `runtime` on the same session is a resume), a ctx over the branch (or the part of it `/tree`
 * chose, or a compacted projection), the status line and notifications recorded.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { estimateTokens, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../../../src/session/messages.ts";
import { STATUS_LINE_KEY } from "../../../src/host/status-runtime.ts";
import { assistant, call, result, text, user } from "../message-factory.ts";
import { driveKeeper } from "./keeper-driver.ts";
import { withAgentDir } from "./agent-dir.ts";

export const big = (tag: string) => Array.from({ length: 200 }, (_, i) => `${tag} row ${i}`.padEnd(39, ".")).join("\n");
export const tokensOf = (messages: readonly ContextMessage[]) => messages.reduce((n, m) => n + estimateTokens(m as Parameters<typeof estimateTokens>[0]), 0);

export interface Session {
  entries: Array<Record<string, unknown>>;
  agentDir: string;
  cwd: string;
  /** The branch Pi shows: all entries, or the first `leaf` of them after /tree. */
  leaf?: number;
  /** A compaction replaced the projection: these messages, and Pi has no context figure yet. */
  compacted?: ContextMessage[];
}

export function newSession(contextKeeper: Record<string, unknown> = { cache: { discipline: false }, pruning: { chainCompression: { enabled: false } } }): Session {
  const cwd = mkdtempSync(join(tmpdir(), "status-follows-"));
  const agentDir = join(cwd, "agent");
  mkdirSync(agentDir);
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextKeeper }));
  return { entries: [], agentDir, cwd };
}

/** A Pi runtime on the session: its own host (as after `pi -c`), a ctx over the session's entries. */
export function runtime(session: Session) {
  let id = session.entries.length;
  const push = (e: Record<string, unknown>) => {
    id++;
    session.entries.push({ ...e, id: `e${id}`, parentId: id > 1 ? `e${id - 1}` : null, timestamp: new Date(1_000 + id).toISOString() });
  };
  const pi = {
    appendEntry: (customType: string, data: unknown) => push({ type: "custom", customType, data }),
    getThinkingLevel: () => "off",
    getActiveTools: () => ["read"],
    setActiveTools: () => {},
  };
  const branch = () => session.entries.slice(0, session.leaf ?? session.entries.length);
  const messages = (): ContextMessage[] => session.compacted ?? branch().filter((e) => e.type === "message").map((e) => e.message as ContextMessage);
  const statuses: Array<string | undefined> = [];
  const notes: string[] = [];
  const ctx = {
    cwd: session.cwd,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: (t: string) => void notes.push(t), setStatus: (key: string, t: string | undefined) => key === STATUS_LINE_KEY && statuses.push(t) },
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
    modelRegistry: { getAvailable: () => [] },
    sessionManager: { getBranch: branch, getEntries: branch, buildSessionProjection: () => ({ messages: messages() }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: session.compacted ? null : 10_000, contextWindow: 200_000, percent: session.compacted ? null : 5 }),
  } as unknown as ExtensionCommandContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  withAgentDir(session.agentDir, () => host.onSessionStart(ctx));
  const say = (m: ContextMessage) => push({ type: "message", message: m });
  const command = async (args: string) => {
    await host.onKeeperCommand(args, ctx);
    return notes.at(-1)!;
  };
  return { host, ctx, say, messages, statuses, command };
}

export type KeeperRuntime = ReturnType<typeof runtime>;

/** Reads r<from>… r<from+count−1> of 200-line outputs, from timestamp `at`, then the loop's answer and a short answered prompt. */
export function sayReadLoop(rt: KeeperRuntime, from: number, count: number, at: number): void {
  for (let i = 0; i < count; i++) {
    rt.say(assistant([call(`r${from + i}`, "read", { path: `r${from + i}.ts` })], at + 2 * i));
    rt.say(result(`r${from + i}`, "read", big(`r${from + i}`), at + 2 * i + 1));
  }
  const end = at + 2 * count;
  rt.say(assistant([text("read")], end));
  rt.say(user("next", end + 1));
  rt.say(assistant([text("done")], end + 2));
}

/** A session with one prompt of three reads, answered, and a second prompt, answered. */
export function played(contextKeeper?: Record<string, unknown>): { session: Session; rt: KeeperRuntime } {
  const session = newSession(contextKeeper);
  const rt = runtime(session);
  rt.say(user("read them", 1));
  sayReadLoop(rt, 0, 3, 2);
  return { session, rt };
}

