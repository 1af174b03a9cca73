/**
 * Bad input on the wire (issue #14), each on the real pi CLI: corrupt, newer-version and cut
 * entries of this extension in a resumed session file; outputs of 50 MB, binary and invalid
 * UTF-8; a settings file that is not JSON; a summarizer model that does not exist. Each time
 * the session keeps running, one message names what was wrong and what was done, nothing
 * already persisted is lost, and pruning goes on.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { CUSTOM_TYPE_FLUSH, type FlushRecord } from "../../src/state/schema.ts";
import { flushRecordsOf } from "../support/state/flush-entries.ts";
import { startFakeAnthropic, type MainStep } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace, type RunPiOptions } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { assemblePages, humanPromptIndex, originalFromSession, recallExchanges, stubRefs } from "./support/recall-wire.ts";
import { damageSession, readEntriesLeniently, RECALL_PROMPT, recallScript } from "./support/session-damage.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" } };
const scenario = generateScenario({ seed: 31, prompts: 3, stepsPerPrompt: [3, 4], files: 5, fileBytes: [4000, 20000], failureRate: 0 });
const [p1, p2, p3] = scenario.stepsByPrompt as [MainStep[], MainStep[], MainStep[]];
const errorsOf = (run: { requests: Array<{ status: number; errorMessage?: string }> }) => run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage);
const keeperWarnings = (run: { notifications: Array<{ message: string; notifyType: string }> }) =>
  run.notifications.filter((n) => n.notifyType === "warning" && n.message.startsWith("context-keeper"));

describe("bad input on the wire", () => {
  test("corrupt, newer-version and cut-mid-line keeper entries: one message, /keeper lists them, pruning goes on", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: [...p1, ...p2, ...p3, { text: "All done." }], idNonce: "corrupt" });
    const common: Partial<RunPiOptions> = { server, mode: "rpc", model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 60_000 };
    try {
      const first = await runPi({ ...common, workspace, prompts: [scenario.prompts[0]!, scenario.prompts[1]!] } as RunPiOptions);
      const file = first.sessionFile!;
      const [flush1, flush2] = flushRecordsOf(first.sessionEntries).map(({ entry }) => entry);
      expect(flush2).toBeDefined();
      expect((flush1!.data as FlushRecord).summaries.length).toBeGreaterThan(0);
      // The damage: flush 2's entry comes from a newer format, flush 1's first summary is
      // garbage, and the file's last line is cut in the middle (a crash mid-write).
      damageSession(file, (e) => {
        if (e.id === flush2!.id) return { ...e, data: { ...(e.data as object), version: 3, newField: [1, 2] } };
        if (e.id !== flush1!.id) return e;
        const data = e.data as FlushRecord;
        return { ...e, data: { ...data, summaries: [{ batchKey: 42, summary: "garbage" }, ...data.summaries.slice(1)] } };
      });
      const text = readFileSync(file, "utf8");
      const lastLine = text.trimEnd().split("\n").at(-1)!;
      writeFileSync(file, text.trimEnd().slice(0, text.trimEnd().length - Math.floor(lastLine.length / 2)));
      const intact = first.sessionEntries.slice(0, -1).map((e) => e.id);

      const resumed = await runPi({ ...common, resume: workspace, prompts: [scenario.prompts[2]!, "/keeper", "Anything left?"] } as RunPiOptions);
      expect(resumed.exitCode).toBe(0);
      expect(errorsOf(resumed)).toEqual([]);
      const warnings = keeperWarnings(resumed);
      expect(warnings.map((w) => w.message.split(" — ")[0])).toEqual(["context-keeper: restored the saved state with 2 problem(s)"]);
      expect(warnings[0]!.message).toContain(`${CUSTOM_TYPE_FLUSH} entry ${String(flush2!.id)}: format version 3 is not readable by this version (1 or 2)`);
      expect(warnings[0]!.message).toContain(`${CUSTOM_TYPE_FLUSH} entry ${String(flush1!.id)} (summaries.0)`);
      const view = resumed.notifications.find((n) => n.message.includes("saved state:"))!.message;
      expect(view).toContain("format version 3");
      // Pruning goes on: the last request shows stubs of every prompt, flushes were appended.
      const refs = stubRefs(resumed.mainRequests.at(-1)!.body.messages);
      expect(refs.length).toBeGreaterThan(3);
      // The cut line stays in the file, unreadable (Pi skips it and ends it with a newline before appending).
      const after = readEntriesLeniently(file);
      expect(after.unreadable).toBe(1);
      expect(flushRecordsOf(after.entries).length).toBeGreaterThan(2);
      // Nothing else persisted is lost: every line before the cut one is still there, first.
      expect(after.entries.slice(0, intact.length).map((e) => e.id)).toEqual(intact);
    } finally {
      server.stop();
    }
  }, 120_000);

  test("outputs of 50 MB, binary and invalid UTF-8: pruned, then recalled byte-exact as the session holds them", async () => {
    const workspace = createPiWorkspace({ "README.md": "# sandbox\n" });
    workspaces.push(workspace);
    const loop: MainStep[] = [
      {
        toolCalls: [
          { name: "bash", input: { command: "head -c 52428800 /dev/zero | tr '\\0' 'x' | fold -w 100" } },
          { name: "bash", input: { command: "head -c 6000 /dev/urandom" } },
          { name: "bash", input: { command: "printf 'ok \\xff\\xfe \\xc3\\x28 caf\\xc3\\xa9 %.0s' $(seq 1 400)" } },
        ],
      },
      { text: "Three outputs read." },
      { toolCalls: [{ name: "bash", input: { command: "echo second && seq 1 3000" } }] },
      { text: "Second step done." },
    ];
    const server = startFakeAnthropic({ script: recallScript(loop), idNonce: "bytes" });
    try {
      const run = await runPi({
        server,
        mode: "rpc",
        model: BIG_WINDOW,
        contextKeeper: KEEPER,
        workspace,
        prompts: ["Produce the odd outputs.", "One more step.", RECALL_PROMPT],
        timeoutMs: 90_000,
      });
      expect(run.exitCode).toBe(0);
      expect(errorsOf(run)).toEqual([]);
      expect(keeperWarnings(run)).toEqual([]);
      const recallRequests = run.prompts.at(-1)!.requests.filter((r) => r.kind === "main");
      const refs = stubRefs(recallRequests[0]!.body.messages, humanPromptIndex(recallRequests[0]!.body.messages));
      expect(refs.length).toBeGreaterThanOrEqual(3);
      const exchanges = recallExchanges(recallRequests.at(-1)!.body.messages);
      expect(exchanges.filter((x) => x.isError).map((x) => x.text.split("\n")[0])).toEqual([]);
      const recovered = assemblePages(exchanges);
      for (const ref of refs) {
        const original = originalFromSession(run.sessionEntries, ref);
        expect(original).toBeDefined();
        expect(Buffer.from(recovered.get(ref) ?? "", "utf8").equals(Buffer.from(original!, "utf8"))).toBe(true);
      }
    } finally {
      server.stop();
    }
  }, 150_000);

  test("a settings file that is not JSON: one warning naming the file, defaults used, pruning on", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const run = await runPi({
      mode: "rpc",
      model: BIG_WINDOW,
      workspace,
      settingsText: '{ "defaultProvider": "fake-anthropic", contextKeeper: { oops',
      args: ["--provider", "fake-anthropic", "--model", BIG_WINDOW.id],
      script: [...p1, ...p2],
      serverOptions: { idNonce: "settings" },
      prompts: [scenario.prompts[0]!, scenario.prompts[1]!, "/keeper"],
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    expect(errorsOf(run)).toEqual([]);
    const warnings = keeperWarnings(run).concat(run.notifications.filter((n) => n.notifyType === "warning" && n.message.includes("unparsable JSON")));
    const named = [...new Set(warnings.map((w) => w.message))].filter((m) => m.includes("settings.json"));
    expect(named).toHaveLength(1);
    expect(named[0]).toContain("ignored");
    expect(stubRefs(run.mainRequests.at(-1)!.body.messages).length).toBeGreaterThan(0);
    expect(run.notifications.find((n) => n.message.includes("settings problems"))?.message).toContain("settings.json");
  }, 90_000);

  test("a summarizer model that does not exist: one notice, the session model summarizes, the flush prunes", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const run = await runPi({
      mode: "rpc",
      model: BIG_WINDOW,
      workspace,
      contextKeeper: { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "model", model: "fake-anthropic/no-such-model" } },
      script: [...p1, ...p2],
      serverOptions: { idNonce: "nomodel" },
      prompts: [scenario.prompts[0]!, scenario.prompts[1]!],
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    expect(errorsOf(run)).toEqual([]);
    // The summaries came from the session model instead, as the notice says.
    expect(run.sideRequests.length).toBeGreaterThan(0);
    expect([...new Set(run.sideRequests.map((r) => r.body.model))]).toEqual([BIG_WINDOW.id]);
    expect(flushRecordsOf(run.sessionEntries).flatMap(({ record }) => record.summaries).length).toBeGreaterThan(0);
    expect(stubRefs(run.mainRequests.at(-1)!.body.messages).length).toBeGreaterThan(0);
    const notices = keeperWarnings(run).filter((n) => n.message.includes("no-such-model"));
    expect(notices).toHaveLength(1);
  }, 90_000);
});
