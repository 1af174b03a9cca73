/**
 * A flush whose spill file cannot be written (a regular file where the spill folder should
 * be): it still commits — stubs, summaries and the recall entry land, the entry without the
 * side file — the original is recalled from the session, and one warning says so, once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_DIR_NAME, SessionManager, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import { CUSTOM_TYPE_FLUSH, type FlushRecord } from "../state/schema.ts";
import type { ContextMessage } from "../session/messages.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";

const root = mkdtempSync(join(tmpdir(), "keeper-flush-job-"));
const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
process.env.PI_CODING_AGENT_DIR = join(root, "agent");
afterAll(() => {
  if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
  rmSync(root, { recursive: true, force: true });
});
const project = join(root, "project");
mkdirSync(join(project, CONFIG_DIR_NAME), { recursive: true });
writeFileSync(
  join(project, CONFIG_DIR_NAME, "settings.json"),
  JSON.stringify({ contextKeeper: { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" }, cache: { discipline: false }, recall: { spillThresholdBytes: 2048 } } }),
);
const BIG = "x".repeat(5_000) + "\n";

describe("a flush whose spill write fails", () => {
  test("commits without the side file, recall keeps the original's hash, one warning for the session", async () => {
    const sm = SessionManager.inMemory(project);
    const sessionFile = join(root, "session.jsonl");
    writeFileSync(`${sessionFile}.keeper`, "a file where the spill folder should be");
    const notices: string[] = [];
    const ctx = {
      sessionManager: new Proxy(sm, { get: (t, k) => (k === "getSessionFile" ? () => sessionFile : Reflect.get(t, k, t)) }),
      model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
      getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000, percent: 5 }),
      hasUI: true,
      ui: { notify: (t: string) => void notices.push(t), setStatus: () => {} },
      cwd: project,
      isProjectTrusted: () => true,
    } as unknown as ExtensionCommandContext;
    const pi = { appendEntry: (type: string, data: unknown) => void sm.appendCustomEntry(type, data), getThinkingLevel: () => "off", getActiveTools: () => [], setActiveTools: () => {} };
    const host = driveKeeper(pi as never, { now: () => 1_000 });
    host.onSessionStart(ctx);
    const prompt = async (n: number, base: number) => {
      const id = `c${n}`;
      const msgs: ContextMessage[] = [
        user(`p${n}`, base),
        assistant([call(id, "read", { path: `${id}.ts` })], base + 1),
        result(id, "read", `${id} ${BIG}`, base + 2),
        assistant([text(`done ${n}`)], base + 3),
      ];
      for (const m of msgs) sm.appendMessage(m as never);
      await host.onKeeperCommand("now", ctx);
    };
    await prompt(1, 10);
    await prompt(2, 20);
    const state = restoreReconciled(sm.getBranch()).state;
    expect(state.frontier.stubbedKeys.sort()).toEqual(["c1@11#0", "c2@21#0"]);
    // One flush entry per flush, each with its recall delta.
    const flushEntries = sm.getBranch().filter((e) => e.type === "custom" && (e as { customType?: string }).customType === CUSTOM_TYPE_FLUSH);
    expect(flushEntries.map((e) => (e as { data: FlushRecord }).data.recall !== undefined)).toEqual([true, true]);
    const index = restoreRecallIndex(sm.getBranch()).index;
    expect(Object.keys(index.entries).sort()).toEqual(["c1@11#0", "c2@21#0"]);
    for (const entry of Object.values(index.entries)) {
      expect(entry.spillPath).toBeUndefined();
      expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    const warnings = notices.filter((t) => t.includes("could not write"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/EEXIST|ENOTDIR/);
    // `/keeper` lists it under the saved state.
    await host.onKeeperCommand("", ctx);
    expect(notices.at(-1)).toContain("could not write 1 copy(ies) of large outputs beside the session");
    // The stub's original comes back from the session itself.
    const tool = host.recallTool();
    const answer = await tool.execute("t1", { ref: "c1@11#0" } as never, undefined, undefined, ctx as never);
    expect(JSON.stringify(answer)).toContain("c1 xxxx");
  });
});
