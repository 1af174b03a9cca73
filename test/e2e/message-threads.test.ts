/**
 * Anthropic message threads on the wire: the real pi CLI with `compat.supportsMessageThreads`
 * (Pi's default on api.anthropic.com) against the fake Anthropic server, which keeps each
 * thread's prefix and stands a `continue` for its full request (test/support/fake-anthropic/threads.ts).
 * The same script runs with the keeper and threads off, with the keeper and threads on, and
 * bare with threads on.
 *
 * - Requests are valid: 0 refused; continues carry only the new messages, no system or tools.
 * - The keeper renders the very same full requests with threads on as with them off (its
 *   `before_provider_request` sees the full payload; Pi cuts the thread after it), so every
 *   flush that changed history makes Pi start a new thread, and between flushes Pi continues.
 * - Cost with threads on ≤ off (same script, side by side); `/keeper cache` and the status
 *   line say the same in both runs, and the busts they count are the ones on the wire.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { RecordedRequest, WireMessage } from "../support/fake-anthropic/index.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { wireCost } from "../support/compaction/threshold-wire.ts";
import { createPiWorkspace, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { withoutCacheControl } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
// Flushes at request ends only (the in-loop triggers off): threads start anew where history changed, at prompt starts.
const KEEPER = { pruning: { budgetTrigger: { enabled: false }, loopFlush: { enabled: false } }, summarizer: { mode: "extractive" } };
const THREADS = { supportsMessageThreads: true };

/** The full request a record stands for, marks aside, string content as one text block (the same to the API). */
function fullMessages(r: RecordedRequest): WireMessage[] {
  const messages = r.effectiveBody!.messages.map((m) => (typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m));
  return withoutCacheControl(messages);
}

const threadKind = (r: RecordedRequest) => (r.body.thread as { type?: string } | undefined)?.type ?? "none";

/** Requests that did not read back the whole cached prefix of the one before (cache read below its read + write). */
function wireBusts(main: RecordedRequest[]): number {
  return main.filter((r, i) => {
    const prev = main[i - 1]?.response?.usage;
    return prev !== undefined && r.response!.usage.cache_read_input_tokens < prev.cache_read_input_tokens + prev.cache_creation_input_tokens;
  }).length;
}

/** A message block other than the last message's that carries a mark: the keeper's seam. */
function seamIndex(messages: WireMessage[]): number {
  for (let i = messages.length - 2; i >= 0; i--) {
    const m = messages[i]!;
    if (Array.isArray(m.content) && m.content.some((b) => b.cache_control)) return i;
  }
  return -1;
}

const cacheView = (r: PiRunResult) => r.notifications.map((n) => n.message).find((m) => m.startsWith("Prompt cache:")) ?? "";
const statusLines = (r: PiRunResult) => r.records.filter((x) => x.method === "setStatus").map((x) => String(x.statusText ?? ""));

describe("Anthropic message threads", () => {
  const scenario = generateScenario({ seed: 21, prompts: 4, stepsPerPrompt: [9, 12], files: 10, fileBytes: [8192, 40960] });

  test("valid requests, the keeper's full requests unchanged, cost with threads ≤ without, figures right when the body is a delta", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const arm = async (o: { extension: boolean; compat?: Record<string, unknown> }) => {
      const server = startFakeAnthropic({ script: scenario.steps, idNonce: "same" });
      try {
        const prompts = o.extension ? [...scenario.prompts, "/keeper cache"] : scenario.prompts;
        return await runPi({ server, prompts, mode: "rpc", workspace, model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 120_000, ...o });
      } finally {
        await server.stop();
      }
    };
    const off = await arm({ extension: true });
    const on = await arm({ extension: true, compat: THREADS });
    const bare = await arm({ extension: false, compat: THREADS });

    for (const r of [off, on, bare]) {
      expect(r.requests.filter((q) => q.status !== 200).map((q) => `${q.status} ${q.errorCode ?? ""} ${q.errorMessage}`)).toEqual([]);
      expect(r.records.filter((x) => x.type === "extension_error")).toEqual([]);
      expect(r.mainRequests.length).toBe(scenario.steps.length);
    }
    // Off: no thread field at all. On: a create, then continues with only the new messages.
    expect(off.requests.every((r) => threadKind(r) === "none")).toBe(true);
    const kinds = on.mainRequests.map(threadKind);
    expect(kinds[0]).toBe("create");
    expect(kinds.filter((k) => k === "continue").length).toBeGreaterThan(kinds.length / 2);
    for (const r of on.mainRequests.filter((q) => threadKind(q) === "continue")) {
      expect(r.body.system).toBeUndefined();
      expect(r.body.tools).toBeUndefined();
      expect(r.body.messages.length).toBeLessThan(r.effectiveBody!.messages.length);
    }
    // The keeper renders the same full requests either way (refs name a message's timestamp, which differs between runs).
    const sameRun = (r: RecordedRequest) => JSON.stringify(fullMessages(r)).replace(/@-?\d+#/g, "@T#");
    expect(on.mainRequests.map(sameRun)).toEqual(off.mainRequests.map(sameRun));
    // Pi starts a new thread exactly where the history sent before changed (a flush rewrote it).
    const creates = on.mainRequests.flatMap((r, i) => (i > 0 && threadKind(r) === "create" ? [i] : []));
    for (const i of creates) {
      const before = fullMessages(on.mainRequests[i - 1]!);
      expect(JSON.stringify(fullMessages(on.mainRequests[i]!).slice(0, before.length))).not.toBe(JSON.stringify(before));
    }
    // The seam mark goes out on creates only: on a continue its message is in the thread's prefix.
    const seamsOff = off.mainRequests.filter((r) => seamIndex(r.body.messages) >= 0).length;
    const seamsOn = on.mainRequests.filter((r) => seamIndex(r.body.messages) >= 0).length;

    const [costOff, costOn, costBare] = [wireCost(off.requests), wireCost(on.requests), wireCost(bare.requests)];
    const bustsOn = wireBusts(on.mainRequests);
    console.log(
      `[threads] ${on.mainRequests.length} main requests with threads on: ${creates.length + 1} creates, ${kinds.filter((k) => k === "continue").length} continues; ` +
        `keeper cost threads on/off ${(costOn / costOff).toFixed(4)}× ($${costOn.toFixed(4)} vs $${costOff.toFixed(4)}), ×bare (threads on) ${(costOn / costBare).toFixed(3)}; ` +
        `seam mark sent on ${seamsOn} requests (off: ${seamsOff}); wire busts on ${bustsOn}, off ${wireBusts(off.mainRequests)}`,
    );
    console.log(`[threads] /keeper cache (on): ${cacheView(on).split("\n")[0]}`);
    expect(costOn).toBeLessThanOrEqual(costOff);
    // Figures: the same in both runs, and the busts counted are the wire's.
    expect(cacheView(on).split("\n")[0]).toBe(cacheView(off).split("\n")[0]);
    expect(cacheView(on)).toMatch(new RegExp(`^Prompt cache: ${bustsOn} of ${on.mainRequests.length} requests had to write cached history again`));
    expect(statusLines(on)).toEqual(statusLines(off));
  }, 400_000);

  test("fallbacks: a lost thread (thread_not_found) is resent as a new thread, an endpoint that cannot thread (thread_unsupported_request) in full; the keeper's figures count what Pi sent", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const short = scenario.stepsByPrompt.slice(0, 2).flat();
    const prompts = [...scenario.prompts.slice(0, 2), "/keeper cache"];
    // The server loses the thread of every fifth reply: continuing it is thread_not_found.
    let replies = 0;
    const lost = startFakeAnthropic({ idNonce: "same", script: short, threads: { forget: () => ++replies % 5 === 0 } });
    const unsupported = startFakeAnthropic({ idNonce: "same", script: short, threads: { unsupported: true } });
    try {
      const common = { prompts, mode: "rpc" as const, workspace, model: BIG_WINDOW, contextKeeper: KEEPER, compat: THREADS, timeoutMs: 120_000 };
      const a = await runPi({ ...common, server: lost });
      const b = await runPi({ ...common, server: unsupported });
      for (const [r, code] of [
        [a, "thread_not_found"],
        [b, "thread_unsupported_request"],
      ] as const) {
        const refused = r.requests.filter((q) => q.status !== 200);
        expect(refused.length).toBeGreaterThan(0);
        expect(refused.every((q) => q.errorCode === code)).toBe(true);
        // each refusal is followed by Pi's resend, which is answered
        for (const q of refused) expect(r.requests[q.seq + 1]?.status).toBe(200);
        const sent = r.mainRequests.filter((q) => q.status === 200);
        expect(sent.length).toBe(short.length);
        expect(r.records.filter((x) => x.type === "extension_error")).toEqual([]);
        // /keeper cache counts the requests Pi built (one before_provider_request each), not the refused attempts.
        expect(cacheView(r)).toMatch(new RegExp(`^Prompt cache: ${wireBusts(sent)} of ${sent.length} requests had to write cached history again`));
      }
      expect(a.requests.filter((q) => q.status !== 200).every((q) => threadKind(q) === "continue")).toBe(true);
      expect(a.requests.filter((q) => q.status === 200 && threadKind(q) === "continue").length).toBeGreaterThan(0);
      // Unsupported: refused once, then no thread field for the rest of the session.
      expect(b.requests.map(threadKind).filter((k) => k !== "none")).toEqual(["create"]);
      console.log(`[threads] fallbacks: ${a.requests.filter((q) => q.status !== 200).length} thread_not_found → new threads; ${b.requests.filter((q) => q.status !== 200).length} thread_unsupported_request → threads off; cost lost/unsupported ${(wireCost(a.requests) / wireCost(b.requests)).toFixed(4)}×`);
    } finally {
      await Promise.all([lost.stop(), unsupported.stop()]);
    }
  }, 300_000);

  test("loops that outlast the cache TTL (a virtual provider clock, 45 s per request): threads cost more only where a new thread starts, by the seam prefix its continues never refreshed", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const arm = async (compat?: Record<string, unknown>) => {
      let t = Date.now();
      const server = startFakeAnthropic({ idNonce: "same", clock: () => t, script: ({ kindIndex }) => ((t += 45_000), scenario.steps[kindIndex] ?? { text: "(exhausted)" }) });
      try {
        return await runPi({ server, prompts: scenario.prompts, mode: "rpc", workspace, model: BIG_WINDOW, contextKeeper: KEEPER, timeoutMs: 120_000, ...(compat ? { compat } : {}) });
      } finally {
        await server.stop();
      }
    };
    const off = await arm();
    const on = await arm(THREADS);
    for (const r of [off, on]) expect(r.requests.filter((q) => q.status !== 200)).toEqual([]);
    const differing = on.mainRequests.flatMap((r, i) => (JSON.stringify(r.response!.usage) === JSON.stringify(off.mainRequests[i]!.response!.usage) ? [] : [i]));
    // Every difference is at a request that starts a thread (after a flush changed history) and reads less:
    // with threads off the seam's prefix was refreshed by every request, with threads on only by the create.
    expect(differing.every((i) => i > 0 && threadKind(on.mainRequests[i]!) === "create")).toBe(true);
    for (const i of differing) {
      const seam = seamIndex(off.mainRequests[i]!.body.messages);
      expect(seam).toBeGreaterThanOrEqual(0);
      expect(on.mainRequests[i]!.response!.usage.cache_read_input_tokens).toBeLessThan(off.mainRequests[i]!.response!.usage.cache_read_input_tokens);
    }
    const lostReads = differing.reduce((n, i) => n + off.mainRequests[i]!.response!.usage.cache_read_input_tokens - on.mainRequests[i]!.response!.usage.cache_read_input_tokens, 0);
    console.log(
      `[threads] 45 s per request: keeper cost threads on/off ${(wireCost(on.requests) / wireCost(off.requests)).toFixed(4)}×; ` +
        `${differing.length} creates read ${lostReads} fewer tokens (the seam prefixes, expired on the provider with threads on)`,
    );
  }, 300_000);
});
