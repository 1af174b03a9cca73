/**
 * The cache seam on the wire: the real pi CLI with this extension (cache discipline and seam
 * on, the defaults) against the fake Anthropic server, which answers 400 for more than four
 * `cache_control` marks.
 *
 * - No request carries more than 4 marks, and the seam (a mark inside history, besides pi's own
 *   on tools, system and the last message) appears once a frozen boundary exists.
 * - A flush that re-writes history after the seam leaves the prefix up to the seam readable
 *   (at a prompt start, and inside a loop, where the seam sits before the loop's recent steps):
 *   at the first request after such a flush, the analyzer reads at least the tokens up to the
 *   seam's block (and, in the same request, the fake provider reports a cache read as large).
 * - `/keeper why` and `/keeper cache` (and their `--detail`) answer without any model request.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { flattenRequest } from "../../src/cache/flatten.ts";
import { createCharRatioEstimator } from "../../src/cache/token-estimator.ts";
import type { WireRequestBody } from "../../src/cache/wire-types.ts";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { analyze, bustIndices, frontierEntryTimes, firstRequestsAfterFlush } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
const SETTINGS = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" } };

const bodyOf = (r: RecordedRequest) => r.body as unknown as WireRequestBody;

/** Marks per request, and the flat index of the seam (a marked message block other than the last message's). */
function marks(body: WireRequestBody): { count: number; seamBlock: number | undefined } {
  const flat = flattenRequest(body);
  const last = body.messages.length - 1;
  let seamBlock: number | undefined;
  let count = 0;
  flat.forEach((b, i) => {
    if (!b.mark) return;
    count++;
    if (b.layer === "messages" && b.messageIndex < last) seamBlock = i;
  });
  return { count, seamBlock };
}

/** Estimated tokens of everything up to and including flat block `upTo` (the analyzer's estimator). */
function prefixTokens(body: WireRequestBody, upTo: number): number {
  const estimate = createCharRatioEstimator();
  return flattenRequest(body)
    .slice(0, upTo + 1)
    .reduce((n, b) => n + estimate(b), 0);
}

describe("cache seam on the wire", () => {
  const scenario = generateScenario({ seed: 21, prompts: 4, stepsPerPrompt: [9, 12], files: 10, fileBytes: [8192, 40960] });

  test("≤ 4 marks on every request; a rewrite after the seam still reads the prefix up to it", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const run = await runPi({
      prompts: [...scenario.prompts, "/keeper why", "/keeper cache", "/keeper why --detail", "/keeper cache --detail"],
      script: scenario.steps,
      mode: "rpc",
      workspace,
      model: BIG_WINDOW,
      contextKeeper: SETTINGS,
      serverOptions: { idNonce: "same" },
    });
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    const requests = run.mainRequests;
    expect(requests.length).toBe(scenario.stats.mainRequests);

    const perRequest = requests.map((r) => marks(bodyOf(r)));
    expect(Math.max(...perRequest.map((m) => m.count))).toBeLessThanOrEqual(4);
    const withSeam = perRequest.filter((m) => m.seamBlock !== undefined).length;
    expect(withSeam).toBeGreaterThan(0);

    const analyses = analyze(requests);
    const flushes = frontierEntryTimes(run.sessionEntries);
    const afterFlush = firstRequestsAfterFlush(requests, flushes);
    const busts = bustIndices(analyses);
    // A bust only ever follows a flush (a final answer's, or one inside a loop where it paid), at most one per flush.
    expect(busts.filter((i) => !afterFlush.has(i))).toEqual([]);
    expect(busts.length).toBeLessThanOrEqual(flushes.length);

    // Busts where the seam the previous request carried is still in place (a rewrite after
    // it): the prefix up to the seam was read.
    const seamBusts = busts.filter((i) => i > 0 && perRequest[i]!.seamBlock !== undefined && perRequest[i]!.seamBlock === perRequest[i - 1]!.seamBlock);
    for (const i of busts) console.log(`[cache-seam] bust ${i}: seam block ${perRequest[i - 1]?.seamBlock} → ${perRequest[i]!.seamBlock}, read ${analyses[i]!.read} of ${analyses[i]!.totalTokens}`);
    console.log(`[cache-seam] ${requests.length} requests, ${withSeam} with a seam; busts at ${busts.join(",")}; with a seam at ${seamBusts.join(",")}`);
    expect(seamBusts.length).toBeGreaterThan(0);
    for (const i of seamBusts) {
      const body = bodyOf(requests[i]!);
      const upToSeam = prefixTokens(body, perRequest[i]!.seamBlock!);
      expect(analyses[i]!.read).toBeGreaterThanOrEqual(upToSeam);
      expect(analyses[i]!.read).toBeLessThan(analyses[i]!.totalTokens);
      // The fake provider agrees: its usage reports a cache read at that request.
      expect(requests[i]!.response?.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    }

    const text = run.notifications.map((n) => n.message).join("\n");
    // The first screens in words; the internals under --detail.
    expect(text).toContain("Last decision (flush");
    expect(text).toContain("/keeper why --detail shows the arithmetic.");
    expect(text).toContain("gate decision");
    expect(text).toContain("Last request");
  }, 240_000);
});
