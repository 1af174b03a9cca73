/**
 * Recall on the wire: the real pi CLI with this extension. Two prompts run tool loops
 * (outputs 2–40 KB, one file of multi-byte text, one provider id used twice, one output read
 * twice); their results are pruned at the request-end flushes (prompt 1's loop ends up as a
 * compressed chain, prompt 2's as stubs). A third prompt's script reads every ref the
 * request it answers offers (stubs and chain call lines) and calls `keeper_recall` (several calls per
 * step, following `next offset` pages) until every pruned result is back; the pages, put
 * together, must equal the originals in the session file byte for byte.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { recallDeltasOf } from "../support/state/flush-entries.ts";
import type { MainScript, MainStep, ScriptedToolCall } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import {
  assemblePages,
  blocksOf,
  CHAIN_HEAD,
  flushed,
  humanPromptIndex,
  humanPromptText,
  originalFromSession,
  parsePage,
  pendingOffsets,
  recallExchanges,
  stubRefs,
  toolResultBlockText,
} from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
// Chains collapse one prompt after their answer, so prompt 1's loop comes back as a
// compressed chain (call lines with refs) and prompt 2's as stubs.
const KEEPER = { pruning: { budgetTrigger: { enabled: false }, chainCompression: { rollingWindow: 1 } }, summarizer: { mode: "extractive" } };
const RECALL_PROMPT = "RECALL-ALL: bring back every pruned output verbatim.";
const DUP_ID = "toolu_dup_0001";
const UNKNOWN_REF = "toolu_nope@1#0";
const CALLS_PER_STEP = 5;
/** An odd page size, so page ends fall inside surrogate pairs of the emoji file. */
const UNICODE_PAGE = 5001;
const UNICODE_FILE = "docs/unicode-notes.md";

/** ~32 KB of multi-byte text (under Pi's 50 KB read limit): accents (2 bytes), CJK (3 bytes), emoji (4 bytes, surrogate pairs). */
function unicodeFile(): string {
  const lines: string[] = ["# Ünïcödé notes — 日本語 · 中文 · 😀", ""];
  for (let n = 1; lines.join("\n").length < 5000; n++) {
    lines.push(`${n}. Grüße aus Köln — 東京の天気は晴れ — 🚀🎉 ${"😀".repeat(n % 7)} façade naïve coöperate`);
  }
  // One emoji line longer than two pages: with an odd page size one page end must fall inside a pair.
  lines.push("a" + "😀🎉".repeat(2600));
  return lines.join("\n") + "\n";
}

describe("keeper_recall on the wire", () => {
  const scenario = generateScenario({ seed: 11, prompts: 2, stepsPerPrompt: [5, 6], files: 6, fileBytes: [2048, 40960], failureRate: 0.1 });
  const files = { ...scenario.files, [UNICODE_FILE]: unicodeFile() };
  const paths = Object.keys(scenario.files).filter((p) => p !== "README.md");
  // Prompt 1: the unicode file is read under an explicit id; prompt 2 reuses that id for
  // another output, and reads a file a second time (an identical output, aliased).
  const [p1, p2] = scenario.stepsByPrompt as [MainStep[], MainStep[]];
  const prompt1: MainStep[] = [...p1.slice(0, 2), { toolCalls: [{ id: DUP_ID, name: "read", input: { path: UNICODE_FILE } }] }, ...p1.slice(2)];
  const prompt2: MainStep[] = [
    { toolCalls: [{ name: "read", input: { path: paths[0]! } }] },
    ...p2.slice(0, 2),
    { toolCalls: [{ id: DUP_ID, name: "bash", input: { command: `cat ${paths[1]!}` } }] },
    { toolCalls: [{ name: "read", input: { path: paths[0]! } }] },
    ...p2.slice(2),
  ];
  const listed = [...prompt1, ...prompt2];

  /** Prompts 1–2 follow the list; the recall prompt is answered from the request itself. */
  function script(): MainScript {
    let cursor = 0;
    return ({ request }) => {
      const body = request.body;
      if (!humanPromptText(body).includes(RECALL_PROMPT)) return listed[cursor++] ?? { text: "(script exhausted)" };
      const prompt = humanPromptIndex(body.messages);
      const refs = stubRefs(body.messages, prompt);
      const exchanges = recallExchanges(body.messages);
      const calls: ScriptedToolCall[] = [];
      if (exchanges.length === 0) {
        calls.push({ name: "keeper_recall", input: { ref: UNKNOWN_REF } });
        calls.push({ name: "keeper_recall", input: { toolCallId: DUP_ID } });
      }
      for (const [ref, offset] of pendingOffsets(refs, exchanges)) {
        if (offset === undefined || calls.length >= CALLS_PER_STEP) continue;
        // The reused id's outputs (the multi-byte file among them) come in small odd pages.
        calls.push({ name: "keeper_recall", input: { ref, offset, ...(ref.startsWith(`${DUP_ID}@`) ? { limit: UNICODE_PAGE } : {}) } });
      }
      if (calls.length === 0) return { text: `Recovered ${refs.length} pruned outputs.` };
      return { text: "Recalling pruned outputs.", toolCalls: calls };
    };
  }

  test("every pruned result comes back byte-exact; unknown refs and reused ids are answered clearly", async () => {
    const workspace = createPiWorkspace(files);
    workspaces.push(workspace);
    const run = await runPi({
      // The recall prompt goes out once the flush after prompt 2 is done (the status line counts flushes).
      prompts: [scenario.prompts[0]!, scenario.prompts[1]!, flushed(2), RECALL_PROMPT],
      mode: "rpc",
      workspace,
      model: BIG_WINDOW,
      contextKeeper: KEEPER,
      script: script(),
      serverOptions: { idNonce: "recall" },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);

    const recallRequests = run.prompts.at(-1)!.requests.filter((r) => r.kind === "main");
    const first = recallRequests[0]!.body.messages;
    const refs = stubRefs(first, humanPromptIndex(first));
    const last = recallRequests.at(-1)!;
    const exchanges = recallExchanges(last.body.messages);
    const recovered = assemblePages(exchanges);
    const pagesPerRef = new Map<string, number>();
    for (const x of exchanges) if (typeof x.input.ref === "string" && !x.isError) pagesPerRef.set(x.input.ref, (pagesPerRef.get(x.input.ref) ?? 0) + 1);
    console.log(
      `[recall] ${refs.length} stubs, ${exchanges.length} recall calls over ${recallRequests.length} requests; ` +
        `multi-page refs ${[...pagesPerRef.values()].filter((n) => n > 1).length}; last answer: ${last.response?.text}`,
    );

    // Both prompts' loops were pruned (prompt 1's as a chain), the reused id and the re-read included.
    expect(JSON.stringify(first)).toContain(CHAIN_HEAD);
    expect(refs.length).toBeGreaterThanOrEqual(10);
    const dupRefs = refs.filter((r) => r.startsWith(`${DUP_ID}@`));
    expect(dupRefs).toHaveLength(2);
    expect([...pagesPerRef.values()].some((n) => n >= 3)).toBe(true);
    // Every stub ref has a recall index entry persisted in the session file.
    const indexed = new Set(
      recallDeltasOf(run.sessionEntries).flatMap((delta) => Object.keys(delta.entries)),
    );
    expect(refs.filter((r) => !indexed.has(r))).toEqual([]);

    // Byte-exact recovery of every pruned result.
    const refused = exchanges.filter((x) => x.isError && typeof x.input.ref === "string" && x.input.ref !== UNKNOWN_REF);
    expect(refused.map((x) => `${x.input.ref}: ${x.text.split("\n")[0]}`)).toEqual([]);
    const mismatches: string[] = [];
    for (const ref of refs) {
      const original = originalFromSession(run.sessionEntries, ref);
      const got = recovered.get(ref);
      if (original === undefined || got !== original) mismatches.push(`${ref}: original ${original?.length ?? "missing"} chars, recovered ${got?.length ?? "nothing"}`);
    }
    expect(mismatches).toEqual([]);
    // Compare as UTF-8 bytes too, and check the multi-byte file really went through pages.
    for (const ref of refs) expect(Buffer.from(recovered.get(ref)!, "utf8").equals(Buffer.from(originalFromSession(run.sessionEntries, ref)!, "utf8"))).toBe(true);
    const unicodeRef = dupRefs.find((r) => recovered.get(r)!.includes("😀🎉"))!;
    expect(unicodeRef).toBeDefined();
    expect(pagesPerRef.get(unicodeRef)!).toBeGreaterThanOrEqual(3);
    // At least one page end fell inside a surrogate pair and was moved back by one.
    const unicodePages = exchanges.map((x) => parsePage(x.text)).filter((p) => p?.ref === unicodeRef && p.nextOffset !== undefined);
    expect(unicodePages.some((p) => p!.end - p!.start === UNICODE_PAGE - 1)).toBe(true);
    // The two occurrences of the reused id are different outputs, each recovered as its own.
    expect(recovered.get(dupRefs[0]!)).not.toBe(recovered.get(dupRefs[1]!));

    // An unknown ref: an error result that says so.
    const unknown = exchanges.find((x) => x.input.ref === UNKNOWN_REF)!;
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain(`No pruned output has ref or tool-call id "${UNKNOWN_REF}"`);
    // The reused provider id alone is ambiguous: both occurrences are offered by ref.
    const ambiguous = exchanges.find((x) => x.input.toolCallId === DUP_ID)!;
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.text).toContain(`"${DUP_ID}" occurs 2 times`);
    for (const r of dupRefs) expect(ambiguous.text).toContain(r);

    // The recall results themselves are never pruned: the final request carries them raw.
    const lastPrompt = humanPromptIndex(last.body.messages);
    const loopResults = last.body.messages.slice(lastPrompt + 1).flatMap((m) => blocksOf(m).filter((b) => b.type === "tool_result"));
    expect(loopResults.every((b) => !toolResultBlockText(b).startsWith("[context-keeper]"))).toBe(true);
  }, 90_000);
});
