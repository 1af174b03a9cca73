/**
 * The keeper beside another async compaction (pi-async-compaction, which the keeper replaces:
 * a migrating user may still have it), through the real pi CLI. The other extension is the
 * stand-in in test/support/async-compaction-standin (same command, same handlers). Both
 * register `/async-compact-now`, so Pi names them `async-compact-now:1` / `:2`, and both would
 * make a background summary per compaction. Expected: the keeper says once that the other one
 * is loaded and its own async compaction stands down (one summary job per compaction: the
 * other's); a typed `/async-compact-now` runs the other's command and never reaches the model.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lastUserText, PI_SUMMARIZATION_PROMPT_START, systemText } from "../support/fake-anthropic/classify.ts";
import { compactionsOf, delayedSummaryRouter, errorRecords, readSteps, sandboxFiles, WIRE_SETUP } from "../support/compaction/e2e-wire.ts";
import { REPO_ROOT, runPi, type PiWorkspace } from "../support/pi-runner.ts";

const STANDIN = join(REPO_ROOT, "test", "support", "async-compaction-standin", "index.ts");
const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const standinLog = (file: string): Array<Record<string, unknown>> =>
  existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>) : [];

/** `-e` order: the keeper first (the runner's default) or the other extension first. */
const loadOrder = (first: "keeper" | "other") =>
  first === "keeper" ? { args: ["-e", STANDIN] } : { extension: false as const, args: ["-e", STANDIN, "-e", REPO_ROOT] };

const besideNotices = (run: { notifications: Array<{ message: string }> }) => run.notifications.filter((n) => n.message.includes("another async compaction"));

describe("the keeper beside another async compaction", () => {
  test("one summary job per compaction (the other's); the keeper's stands down and says so once", async () => {
    const script = [...readSteps(Array.from({ length: 13 }, () => 0)), { text: "Done reading." }];
    const run = await runPi({
      ...loadOrder("keeper"),
      mode: "rpc",
      keepWorkspace: true,
      files: sandboxFiles(13),
      script,
      sideRouter: delayedSummaryRouter,
      model: WIRE_SETUP.model,
      settings: WIRE_SETUP.settings,
      contextKeeper: WIRE_SETUP.contextKeeper,
      env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0", STANDIN_LOG: "standin.jsonl" },
      prompts: ["Read the data files one by one."],
      timeoutMs: 60_000,
    });
    workspaces.push(run.workspace);
    const log = standinLog(join(run.workspace.cwd, "standin.jsonl"));
    expect(errorRecords(run.records)).toEqual([]);
    expect(run.mainRequests).toHaveLength(script.length);
    // One compaction, made from the other extension's job; the keeper made no summary of its own.
    const compactions = compactionsOf(run);
    expect(compactions).toHaveLength(1);
    expect(String(compactions[0]!.summary)).toBe("Stand-in summary #1.");
    const keeperSummaries = run.sideRequests.filter((r) => systemText(r.body).includes(PI_SUMMARIZATION_PROMPT_START));
    expect(keeperSummaries).toHaveLength(0);
    expect(log.filter((l) => l.kind === "job")).toHaveLength(1);
    expect(log.filter((l) => l.kind === "handoff")).toHaveLength(1);
    const said = besideNotices(run);
    expect(said).toHaveLength(1);
    expect(said[0]!.message).toContain(STANDIN);
    expect(said[0]!.message).toContain("stands down");
  }, 90_000);

  for (const first of ["keeper", "other"] as const) {
    test(`a typed /async-compact-now runs the other's command and never reaches the model (${first} loaded first)`, async () => {
      const run = await runPi({
        ...loadOrder(first),
        mode: "rpc",
        keepWorkspace: true,
        script: [{ text: "Hello." }],
        env: { STANDIN_LOG: "standin.jsonl" },
        prompts: ["hello", "/async-compact-now"],
      });
      workspaces.push(run.workspace);
      expect(errorRecords(run.records)).toEqual([]);
      expect(run.mainRequests).toHaveLength(1);
      expect(run.mainRequests.map((r) => lastUserText(r.body))).toEqual(["hello"]);
      expect((run.prompts[1]!.response?.data as { disposition?: string } | undefined)?.disposition).toBe("handled");
      const log = standinLog(join(run.workspace.cwd, "standin.jsonl"));
      expect(log.filter((l) => l.kind === "command")).toEqual([{ kind: "command", outcome: "started" }]);
      expect(run.notifications.map((n) => n.message)).toContain("stand-in async compaction: started");
      expect(besideNotices(run)).toHaveLength(1);
    }, 90_000);
  }
});
