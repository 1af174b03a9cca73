/**
 * Real pi resumed on damaged session state (issue #14): each test runs a first prompt that
 * prunes, damages what the run left on disk, resumes with `--continue`, and asserts that the
 * session keeps pruning, says once what was wrong, and loses nothing already persisted.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { CUSTOM_TYPE_RECALL } from "../../src/recall/recall-entries.ts";
import { CUSTOM_TYPE_FRONTIER } from "../../src/state/schema.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace, type RunPiOptions } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { stubRefs } from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
/** Request-end flushes only; every output of 4 KB or more is spilled beside the session. */
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" }, recall: { spillThresholdBytes: 4096 } };

type Entry = Record<string, unknown>;
const customOf = (entries: Entry[], customType: string) => entries.filter((e) => e.type === "custom" && e.customType === customType);
const recallEntriesOf = (entries: Entry[]) =>
  customOf(entries, CUSTOM_TYPE_RECALL).flatMap((e) => Object.values((e.data as { entries: Record<string, { spillPath?: string; bytes: number }> }).entries));

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

      const resumed = await runPi({ ...common, resume: workspace, prompts: [scenario.prompts[1]!, scenario.prompts[2]!] } as RunPiOptions);
      expect(resumed.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
      const messages = resumed.notifications.map((n) => n.message);
      expect(messages.filter((m) => m.includes("flush failed"))).toEqual([]);
      const spillWarnings = messages.filter((m) => m.includes("could not write") && m.includes("spill"));
      expect(spillWarnings).toHaveLength(1);
      expect(spillWarnings[0]).toMatch(/EEXIST|ENOTDIR/);

      // Both resumed prompts' flushes committed: frontiers were appended and prompt 2's loop renders as stubs.
      const frontiersBefore = customOf(first.sessionEntries, CUSTOM_TYPE_FRONTIER).length;
      expect(customOf(resumed.sessionEntries, CUSTOM_TYPE_FRONTIER).length).toBeGreaterThanOrEqual(frontiersBefore + 2);
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
});
