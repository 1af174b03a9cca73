/**
 * The keeper on one API's wire (OpenAI Responses, Chat Completions, Google Generative AI), real
 * pi CLI against the fake server of that format (wire-apis.ts): pruning with the thinking strip
 * forced on, side by side with bare pi (cost ×bare printed as `[wire-<api>]`), `keeper_recall`
 * of every pruned output, and async compaction applied. Each `test/e2e/wire-*.test.ts` runs it
 * for its API.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { ScriptedToolCall } from "../../support/fake-anthropic/index.ts";
import { PI_SUMMARIZATION_PROMPT_START } from "../../support/fake-anthropic/index.ts";
import { compactionsOf, readSteps, sandboxFiles, WIRE_SETUP } from "../../support/compaction/e2e-wire.ts";
import { createPiWorkspace, runPi, type PiWorkspace, type RpcRecord, type RpcStep } from "../../support/pi-runner.ts";
import { generateScenario } from "../../support/scenario.ts";
import { promptTotals, runCost, WIRE_APIS, type WireApi, type WireRecord, type WireScript, type WireSideRouter } from "./wire-apis.ts";
import { chainsOf, lastPromptIndex, recallCalls, refsOf, stubsOf, wireItems, type WireItem } from "./wire-items.ts";
import { assemblePages, originalFromSession, parsePage } from "./recall-wire.ts";

// Flushes at request ends only (the budget trigger has its own tests); a 1M window keeps bare pi from compacting.
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" }, thinkingStrip: { mode: "flush-gated" } };
const BIG_WINDOW = { contextWindow: 1_000_000 };
const RECALL_PROMPT = "RECALL-ALL: bring back every pruned output verbatim.";
// Chains collapse one prompt after their answer: prompt 1's loop comes back as a chain, prompt 2's as stubs.
const KEEPER_ONE_OPEN_LOOP = { ...KEEPER, pruning: { ...KEEPER.pruning, chainCompression: { rollingWindow: 1 } } };

/** Until the n-th flush has set its status line. */
const flushed = (n: number): RpcStep => ({
  waitFor: (_r: RpcRecord, all: readonly RpcRecord[]) => all.filter((x) => x.method === "setStatus" && String(x.statusText ?? "").startsWith("keeper: context ")).length >= n,
  timeoutMs: 10_000,
});

const items = (r: WireRecord) => wireItems(r.effectiveBody ?? r.body);
const loopOf = (all: WireItem[]) => all.slice(lastPromptIndex(all));

export function wireSuite(api: WireApi): void {
  const workspaces: PiWorkspace[] = [];
  afterAll(() => workspaces.forEach((w) => w.cleanup()));
  const a = WIRE_APIS[api];
  const tag = a.tag;
  const startFake = (o: { script: WireScript; sideRouter?: WireSideRouter; idNonce?: string }) => a.start(o) as ReturnType<typeof a.start> & { requests: WireRecord[] };

  describe(`the keeper on the ${api} wire`, () => {
    const scenario = generateScenario({ seed: 7, prompts: 3, stepsPerPrompt: [7, 9], files: 8, fileBytes: [2048, 24576] });

    test("pruning and the forced thinking strip: 0 refused, stubs and chains in this format, the current loop as bare pi sends it, cost ×bare", async () => {
      const workspace = createPiWorkspace(scenario.files);
      workspaces.push(workspace);
      const arm = async (extension: boolean) => {
        const server = startFake({ script: scenario.steps, idNonce: "same" });
        const prompts = extension ? [...scenario.prompts, "/keeper cache --detail"] : scenario.prompts;
        try {
          return await runPi({ server, prompts, mode: "rpc", workspace, model: BIG_WINDOW, thinking: "medium", extension, contextKeeper: KEEPER, timeoutMs: 90_000 });
        } finally {
          await server.stop();
        }
      };
      const bare = await arm(false);
      const keep = await arm(true);
      for (const r of [bare, keep]) {
        expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
        expect(r.records.filter((x) => x.type === "extension_error")).toEqual([]);
      }
      expect(keep.mainRequests.length).toBe(bare.mainRequests.length);

      const last = items(keep.mainRequests.at(-1)!);
      const bareLast = items(bare.mainRequests.at(-1)!);
      // The keeper's stubs and collapsed chains go out in this format.
      expect(stubsOf(last).length + chainsOf(last).length).toBeGreaterThan(0);
      expect(keep.mainRequests.some((r) => chainsOf(items(r)).length > 0)).toBe(true);
      // The current tool loop goes out exactly as bare pi sends it (reasoning included).
      expect(loopOf(last)).toEqual(loopOf(bareLast));
      expect(loopOf(last).filter((i) => i.kind === "reasoning").length).toBeGreaterThan(0);
      // Every call keeps its result and every id is unique, in every request (the fake refuses otherwise; checked here on the wire too).
      for (const r of keep.mainRequests) {
        const all = items(r);
        const calls = all.flatMap((i) => (i.kind === "call" ? [i.callId] : []));
        const results = all.flatMap((i) => (i.kind === "result" ? [i.callId] : []));
        expect(new Set(calls).size).toBe(calls.length);
        expect([...results].sort()).toEqual([...calls].sort());
      }
      // A call the provider signed (Gemini's thought signatures) keeps its signature wherever the keeper sends it.
      const signatures = new Map(bare.mainRequests.flatMap((r) => items(r).flatMap((i) => (i.kind === "call" && i.signature ? [[i.callId, i.signature] as const] : []))));
      if (api === "google-generative-ai") expect(signatures.size).toBeGreaterThan(10);
      for (const r of keep.mainRequests) for (const i of items(r)) if (i.kind === "call" && signatures.has(i.callId)) expect(i.signature).toBe(signatures.get(i.callId));
      const reasoningBefore = (all: WireItem[], end: number) => all.slice(0, end).filter((i) => i.kind === "reasoning").length;
      const previousPrompt = (all: WireItem[]) => lastPromptIndex(all.slice(0, lastPromptIndex(all)));
      if (a.reasoning === "strippable") {
        // Reasoning (reasoning_content, Gemini's thought parts) goes at flushes from the loops
        // closed before the last flush (the newest answer at that flush keeps its own); bare pi sends it all.
        expect(reasoningBefore(bareLast, previousPrompt(bareLast))).toBeGreaterThan(5);
        expect(reasoningBefore(last, previousPrompt(last))).toBe(0);
        expect(reasoningBefore(last, lastPromptIndex(last))).toBeLessThan(reasoningBefore(bareLast, lastPromptIndex(bareLast)));
      } else {
        // Reasoning items are paired with their items by id: never stripped; each one goes out right before its item.
        expect(reasoningBefore(last, previousPrompt(last))).toBeGreaterThan(0);
        for (const r of keep.mainRequests) {
          const all = items(r);
          for (let i = 0; i < all.length; i++) if (all[i]!.kind === "reasoning") expect(["text", "call"]).toContain(all[i + 1]?.kind);
        }
      }
      // `/keeper cache` counts the busts the wire shows: requests that did not read the whole previous prompt back.
      const wireBusts = keep.mainRequests.filter((r, i) => i > 0 && a.usageOf(r)!.cachedTokens < a.fullRead(a.usageOf(keep.mainRequests[i - 1]!)!.promptTokens)).length;
      const view = keep.notifications.map((n) => n.message).find((m) => m.startsWith("Prompt cache:")) ?? "";
      console.log(`${tag} /keeper cache: ${view.split("\n")[0]} · wire: ${wireBusts} busts`);
      expect(view).toContain(` of ${keep.mainRequests.length} requests`);
      // It reads Pi's tools and system prompt as such, wherever the format puts them (Codex: an
      // additional_tools item ahead of the prompt); Chat Completions sends the prompt as its first message, read there.
      expect(view).toMatch(/\n {2}tools +\w+ +[1-9][\d,]* tokens\n/);
      if (api !== "openai-completions") expect(view).toMatch(/\n {2}system +\w+ +[1-9][\d,]* tokens\n/);
      expect(view).toMatch(new RegExp(`^Prompt cache: ${wireBusts} of ${keep.mainRequests.length} requests had to write cached history again — ${wireBusts} because this extension changed history`));
      const ratio = runCost(a, keep.requests) / runCost(a, bare.requests);
      const k = promptTotals(a, keep.requests);
      const b = promptTotals(a, bare.requests);
      console.log(
        `${tag} ${keep.mainRequests.length} main requests; keeper/bare cost ${ratio.toFixed(3)}× ($${runCost(a, keep.requests).toFixed(4)} vs $${runCost(a, bare.requests).toFixed(4)}); ` +
          `prompt tokens ${k.prompt} vs ${b.prompt}, cached ${((k.cached / k.prompt) * 100).toFixed(1)}% vs ${((b.cached / b.prompt) * 100).toFixed(1)}%; ` +
          `last request: ${stubsOf(last).length} stubs, ${chainsOf(last).length} chains`,
      );
      expect(ratio).toBeLessThan(1);
      if (a.transport === "websocket") {
        // Codex: every request on the socket (no fall back to SSE); bare pi continues each one from
        // the last, the keeper all but those after it changed history (the wire's busts), which go in full.
        const continued = (r: WireRecord) => typeof r.body.previous_response_id === "string";
        const line = (run: typeof keep) => `${run.requests.filter((r) => r.transport === "websocket").length}/${run.requests.length} on the socket, ${run.mainRequests.filter(continued).length} continued`;
        console.log(`${tag} transport: bare ${line(bare)}; keeper ${line(keep)}`);
        for (const run of [bare, keep]) expect(run.requests.every((r) => r.transport === "websocket")).toBe(true);
        expect(bare.mainRequests.filter(continued).length).toBe(bare.mainRequests.length - 1);
        expect(wireBusts).toBeGreaterThan(0);
        expect(keep.mainRequests.filter((r, i) => i > 0 && !continued(r)).length).toBe(wireBusts);
      }
    }, 200_000);

    test("keeper_recall brings back every pruned output, byte for byte", async () => {
      const workspace = createPiWorkspace(scenario.files);
      workspaces.push(workspace);
      const listed = [...scenario.stepsByPrompt[0]!, ...scenario.stepsByPrompt[1]!];
      let cursor = 0;
      const script: WireScript = ({ request }) => {
        const all = items(request);
        const prompt = all[lastPromptIndex(all)];
        if (prompt?.kind !== "user" || !prompt.text.includes(RECALL_PROMPT)) return listed[cursor++] ?? { text: "(script exhausted)" };
        const done = new Map<string, number | undefined>();
        for (const x of recallCalls(all)) {
          const page = parsePage(x.text);
          if (page) done.set(page.ref, page.nextOffset);
        }
        const calls: ScriptedToolCall[] = [];
        for (const ref of refsOf(all, lastPromptIndex(all))) {
          const offset = done.has(ref) ? done.get(ref) : 0;
          if (offset !== undefined && calls.length < 6) calls.push({ name: "keeper_recall", input: { ref, offset } });
        }
        return calls.length > 0 ? { text: "Recalling pruned outputs.", toolCalls: calls } : { text: "Recovered every pruned output." };
      };
      const server = startFake({ script, idNonce: "recall" });
      try {
        const run = await runPi({
          server,
          prompts: [scenario.prompts[0]!, scenario.prompts[1]!, flushed(2), RECALL_PROMPT],
          mode: "rpc",
          workspace,
          model: BIG_WINDOW,
          thinking: "medium",
          contextKeeper: KEEPER_ONE_OPEN_LOOP,
          timeoutMs: 90_000,
        });
        expect(run.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
        const recallRequests = run.prompts.at(-1)!.requests.filter((r) => r.kind === "main");
        const first = items(recallRequests[0]!);
        const refs = refsOf(first, lastPromptIndex(first));
        const exchanges = recallCalls(items(recallRequests.at(-1)!)).map((x) => ({ ...x, isError: false }));
        const recovered = assemblePages(exchanges);
        console.log(`${tag} recall: ${stubsOf(first).length} stubs and ${chainsOf(first).length} chain(s) offer ${refs.length} refs; ${exchanges.length} recall calls over ${recallRequests.length} requests`);
        // Both forms reach the wire in this format: prompt 1's loop as a chain, prompt 2's results as stubs.
        expect(chainsOf(first).length).toBeGreaterThanOrEqual(1);
        expect(stubsOf(first).length).toBeGreaterThanOrEqual(3);
        expect(refs.length).toBeGreaterThanOrEqual(10);
        const mismatches = refs.filter((ref) => {
          const original = originalFromSession(run.sessionEntries, ref);
          return original === undefined || recovered.get(ref) !== original;
        });
        expect(mismatches).toEqual([]);
      } finally {
        await server.stop();
      }
    }, 120_000);

    test("async compaction: the summary is made in the background and applied at a turn boundary", async () => {
      const workspace = createPiWorkspace(sandboxFiles(13));
      workspaces.push(workspace);
      const sideRouter: WireSideRouter = ({ request, kindIndex }) =>
        a.instructionsOf(request.body).includes(PI_SUMMARIZATION_PROMPT_START) ? { text: `## Goal\nBackground summary #${kindIndex}.\n\n## Progress\n- read the data files` } : { text: `side answer #${kindIndex}` };
      const steps = [...readSteps(Array(13).fill(0)), { thinking: "All files read.", text: "Done reading." }];
      const server = startFake({ script: steps, sideRouter, idNonce: "compact" });
      try {
        const run = await runPi({
          server,
          prompts: ["Read the data files one by one."],
          mode: "rpc",
          workspace,
          thinking: "medium",
          model: WIRE_SETUP.model,
          settings: WIRE_SETUP.settings,
          contextKeeper: WIRE_SETUP.contextKeeper,
          env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0" },
          timeoutMs: 60_000,
        });
        expect(run.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
        expect(run.mainRequests).toHaveLength(steps.length);
        const compactions = compactionsOf(run);
        expect(compactions.length).toBeGreaterThanOrEqual(1);
        expect(compactions[0]!.fromHook).toBe(true);
        expect(String(compactions[0]!.summary)).toContain("Background summary #0");
        // The requests after it open with Pi's summary message, in this format.
        const after = run.mainRequests.findIndex((r) => items(r).some((i) => i.kind === "user" && i.text.includes("Background summary #0")));
        expect(after).toBeGreaterThan(0);
        console.log(`${tag} compaction: ${run.sideRequests.length} side requests, applied before main request ${after} of ${run.mainRequests.length}`);
      } finally {
        await server.stop();
      }
    }, 90_000);
  });
}
