/**
 * Real pi resumed on damaged session state (issue #14): each test runs a first prompt that
 * prunes, damages what the run left on disk, resumes with `--continue`, and asserts that the
 * session keeps pruning, says once what was wrong, and loses nothing already persisted.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import type { FlushRecord } from "../../src/state/schema.ts";
import { frontiersAlong } from "../support/state/flush-entries.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace, type RunPiOptions } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { assemblePages, humanPromptIndex, originalFromSession, recallExchanges, stubRefs } from "./support/recall-wire.ts";
import { damageSession, RECALL_PROMPT, recallEntriesOf, recallLinesOf, recallScript } from "./support/session-damage.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
/** Request-end flushes only; every output of 4 KB or more is spilled beside the session. */
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" }, recall: { spillThresholdBytes: 4096 } };

describe("damaged session state on resume", () => {
  const scenario = generateScenario({ seed: 23, prompts: 3, stepsPerPrompt: [4, 5], files: 6, fileBytes: [6000, 30000], failureRate: 0 });
  const [p1, p2, p3] = scenario.stepsByPrompt as [never[], never[], never[]];

  test("a regular file where the spill folder should be: flushes still commit without the side files, one warning", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: [...p1, ...p2, ...p3], idNonce: "spill" });
    const common: Partial<RunPiOptions> = { server, mode: "rpc", model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 60_000 };
    try {
      const first = await runPi({ ...common, workspace, prompts: [scenario.prompts[0]!] } as RunPiOptions);
      const sessionFile = first.sessionFile!;
      const spillDir = `${sessionFile}.keeper`;
      expect(existsSync(spillDir)).toBe(true);
      const spilledBefore = recallEntriesOf(first.sessionEntries).filter((e) => e.spillPath !== undefined);
      expect(spilledBefore.length).toBeGreaterThan(0);
      // The damage: the spill folder is gone and a regular file holds its name.
      rmSync(spillDir, { recursive: true, force: true });
      writeFileSync(spillDir, "not a folder");

      const resumed = await runPi({ ...common, resume: workspace, prompts: [scenario.prompts[1]!, scenario.prompts[2]!, "/keeper"] } as RunPiOptions);
      expect(resumed.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
      const messages = resumed.notifications.map((n) => n.message);
      expect(messages.filter((m) => m.includes("flush failed"))).toEqual([]);
      const spillWarnings = resumed.notifications.filter((n) => n.notifyType === "warning" && n.message.includes("could not write")).map((n) => n.message);
      expect(spillWarnings).toHaveLength(1);
      expect(spillWarnings[0]).toMatch(/EEXIST|ENOTDIR/);
      const view = messages.find((m) => m.includes("saved state:"))!;
      expect(view).toMatch(/could not write \d+ copy\(ies\) of large outputs beside the session \((EEXIST|ENOTDIR)/);

      // Both resumed prompts' flushes committed: frontiers were appended and prompt 2's loop renders as stubs.
      const frontiersBefore = frontiersAlong(first.sessionEntries).length;
      expect(frontiersAlong(resumed.sessionEntries).length).toBeGreaterThanOrEqual(frontiersBefore + 2);
      const last = resumed.mainRequests.at(-1)!.body.messages;
      const refs = stubRefs(last);
      const p2Ids = new Set(resumed.prompts[0]!.requests.flatMap((r) => r.response?.toolCalls?.map((c) => c.id) ?? []));
      expect(refs.filter((r) => p2Ids.has(r.split("@")[0]!)).length).toBeGreaterThan(0);
      // Nothing persisted was lost; the new large originals are indexed without a side file.
      const entriesAfter = recallEntriesOf(resumed.sessionEntries);
      expect(entriesAfter.length).toBeGreaterThan(recallEntriesOf(first.sessionEntries).length);
      const added = entriesAfter.slice(recallEntriesOf(first.sessionEntries).length);
      expect(added.some((e) => e.bytes >= 4096)).toBe(true);
      expect(added.filter((e) => e.spillPath !== undefined)).toEqual([]);
      expect(resumed.sessionEntries.slice(0, first.sessionEntries.length)).toEqual(first.sessionEntries);
    } finally {
      server.stop();
    }
  }, 120_000);

  test("recall entries lost or wrong: every stub still recalls byte-exact from the branch, one warning names the bad occurrence", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: recallScript([...p1, ...p2]), idNonce: "lost" });
    const common: Partial<RunPiOptions> = { server, mode: "rpc", model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 60_000 };
    try {
      const first = await runPi({ ...common, workspace, prompts: [scenario.prompts[0]!, scenario.prompts[1]!] } as RunPiOptions);
      const recallLines = recallLinesOf(first.sessionEntries);
      expect(recallLines.length).toBeGreaterThanOrEqual(2);
      // The damage: the first flush's recall delta is gone (the rest of its entry kept), and one
      // occurrence of the last one has a wrong field.
      const [lostId, badId] = [recallLines[0]!.id, recallLines.at(-1)!.id];
      const lostKeys = Object.keys((recallLines[0]!.data as FlushRecord).recall!.entries);
      let badKey = "";
      damageSession(first.sessionFile!, (e) => {
        if (e.id === lostId) return { ...e, data: { ...(e.data as FlushRecord), recall: undefined } };
        if (e.id !== badId) return e;
        const data = structuredClone(e.data) as { recall: { entries: Record<string, { bytes: unknown }> } };
        badKey = Object.keys(data.recall.entries)[0]!;
        data.recall.entries[badKey]!.bytes = "many";
        return { ...e, data };
      });

      const resumed = await runPi({ ...common, resume: workspace, prompts: [RECALL_PROMPT] } as RunPiOptions);
      expect(resumed.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
      const warnings = resumed.notifications.filter((n) => n.message.includes("context-keeper: restored the saved state"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(String(badId));
      expect(warnings[0]!.message).toContain(badKey);

      const requests = resumed.mainRequests;
      const refs = stubRefs(requests[0]!.body.messages, humanPromptIndex(requests[0]!.body.messages));
      expect(refs.length).toBeGreaterThanOrEqual(4);
      expect(refs.filter((r) => lostKeys.includes(r)).length).toBeGreaterThan(0);
      expect(refs).toContain(badKey);
      const exchanges = recallExchanges(requests.at(-1)!.body.messages);
      expect(exchanges.filter((x) => x.isError).map((x) => x.text.split("\n")[0])).toEqual([]);
      const recovered = assemblePages(exchanges);
      const mismatched = refs.filter((r) => recovered.get(r) !== originalFromSession(resumed.sessionEntries, r));
      expect(mismatched).toEqual([]);
    } finally {
      server.stop();
    }
  }, 120_000);

  test("a damaged flush entry (its summaries read, its frontier and stats do not): named once, applied at the next flush, shown in /keeper", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: [...p1, ...p2, ...p3, { text: "All done." }], idNonce: "torn" });
    const common: Partial<RunPiOptions> = { server, mode: "rpc", model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 60_000 };
    try {
      const first = await runPi({ ...common, workspace, prompts: [scenario.prompts[0]!, scenario.prompts[1]!] } as RunPiOptions);
      const { entry: lastFlush, frontier } = frontiersAlong(first.sessionEntries).at(-1)!;
      const lastSeq = frontier.flushSeq;
      const torn = (lastFlush.data as FlushRecord).summaries.filter((r) => r.flushSeq === lastSeq);
      expect(torn.length).toBeGreaterThan(0);
      const tornKeys = torn.flatMap((r) => r.coveredKeys);
      // The damage: the last flush entry's frontier (delta or checkpoint) is unreadable and its stats are gone.
      damageSession(first.sessionFile!, (e) => {
        if (e.id !== lastFlush.id) return e;
        const data = structuredClone(e.data) as Record<string, unknown>;
        const part = data.frontier ? "frontier" : "frontierDelta";
        data[part] = { ...(data[part] as object), flushSeq: "lost" };
        delete data.stats;
        return { ...e, data };
      });

      const resumed = await runPi({ ...common, resume: workspace, prompts: [scenario.prompts[2]!, "/keeper", "Anything left?"] } as RunPiOptions);
      expect(resumed.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
      const warnings = resumed.notifications.filter((n) => n.message.includes("context-keeper: restored the saved state"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(`flush ${lastSeq} was torn`);
      const view = resumed.notifications.find((n) => n.message.includes("saved state:"))!.message;
      expect(view).toContain(`flush ${lastSeq} was torn`);
      // The resumed prompt's first request still shows them raw (history left as it was at the last
      // complete flush); after the next flush the last request shows every one as a stub.
      const refsAt = (i: number) => new Set(stubRefs(resumed.mainRequests.at(i)!.body.messages));
      expect(tornKeys.filter((k) => refsAt(0).has(k))).toEqual([]);
      expect(tornKeys.filter((k) => !refsAt(-1).has(k))).toEqual([]);
      // Nothing persisted was lost: the resumed file starts with the damaged file's lines.
      expect(resumed.sessionEntries.slice(0, first.sessionEntries.length).map((e) => e.id)).toEqual(first.sessionEntries.map((e) => e.id));
    } finally {
      server.stop();
    }
  }, 120_000);
});
