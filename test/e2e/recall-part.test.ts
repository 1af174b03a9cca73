/**
 * A recall that does not pin, and recall of a part, on the wire (real pi CLI, default settings).
 *
 * Prompt 1 reads a source file and a log; its loop collapses when it is answered. Prompt 2's
 * script finds the file's ref in the collapsed chain and calls `keeper_recall` twice: with a
 * pattern (the matching line and two lines around it) and with a line range. Both parts must be
 * the original's lines byte for byte. When prompt 2 is answered its loop — nothing but recalls —
 * collapses too: prompt 3's request shows it as call lines naming the recalled ref, and none of
 * the recalled text.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { MainScript, MainStep, WireRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { CHAIN_HEAD, blocksOf, flushed, humanPromptIndex, humanPromptText, originalFromSession, recallExchanges } from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const READ_ID = "toolu_limits_read";
const SOURCE = [
  "import type { Options } from \"./types.ts\";",
  "",
  ...Array.from({ length: 60 }, (_, i) => `export const LIMIT_${i} = ${i * 37}; // budget for stage ${i} ✓`),
  "export const MAX_RETRIES = 7;",
  ...Array.from({ length: 40 }, (_, i) => `export function stage${i}(o: Options): number { return o.weight * ${i}; }`),
].join("\n") + "\n";
const LOG = Array.from({ length: 80 }, (_, i) => `2026-03-04T10:${String(i % 60).padStart(2, "0")}:00Z INFO worker.run took=${i * 7}ms`).join("\n") + "\n";
const PROMPTS = ["P1: read the limits and the log.", "P2: quote MAX_RETRIES and lines 3-6 of the limits file.", "P3: what did you find?"];

function script(): MainScript {
  const p1: MainStep[] = [{ toolCalls: [{ id: READ_ID, name: "read", input: { path: "src/limits.ts" } }] }, { toolCalls: [{ name: "bash", input: { command: "cat logs/app.log" } }] }, { text: "Read both." }];
  let cursor = 0;
  return ({ request }) => {
    const body = request.body as WireRequest;
    const prompt = humanPromptText(body);
    if (prompt.startsWith("P1")) return p1[cursor++] ?? { text: "(p1 done)" };
    if (prompt.startsWith("P3")) return { text: "MAX_RETRIES is 7." };
    const ref = new RegExp(`${READ_ID}@\\d+#\\d+`).exec(JSON.stringify(body.messages))?.[0];
    const done = recallExchanges(body.messages).length;
    if (!ref) return { text: "no ref in sight" };
    if (done === 0) return { toolCalls: [{ name: "keeper_recall", input: { ref, pattern: "MAX_RETRIES" } }] };
    if (done === 1) return { toolCalls: [{ name: "keeper_recall", input: { ref, startLine: 3, endLine: 6 } }] };
    return { text: "Quoted both." };
  };
}

describe("keeper_recall: parts on the wire, and a recall's loop collapses", () => {
  test("pattern and line range come back verbatim; the recalls' loop collapses at the next flush", async () => {
    const workspace = createPiWorkspace({ "src/limits.ts": SOURCE, "logs/app.log": LOG, "src/types.ts": "export interface Options { weight: number }\n" });
    workspaces.push(workspace);
    const run = await runPi({
      prompts: [PROMPTS[0]!, flushed(1), PROMPTS[1]!, flushed(2), PROMPTS[2]!],
      mode: "rpc",
      workspace,
      script: script(),
      serverOptions: { idNonce: "part" },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);

    const main = run.mainRequests;
    const p2 = main.filter((r) => humanPromptText(r.body).startsWith("P2"));
    // Prompt 1's loop is collapsed in prompt 2's first request, its read one ref away.
    expect(JSON.stringify(p2[0]!.body.messages)).toContain(CHAIN_HEAD);
    const exchanges = recallExchanges(p2.at(-1)!.body.messages);
    expect(exchanges).toHaveLength(2);
    const ref = String(exchanges[0]!.input.ref);
    const original = originalFromSession(run.sessionEntries, ref)!;
    expect(original).toBe(SOURCE);
    const lines = original.replace(/\n$/, "").split("\n");

    // Pattern: a header, then the match with two lines of context on each side, verbatim.
    const [patternHead, ...patternBody] = exchanges[0]!.text.split("\n");
    const at = lines.indexOf("export const MAX_RETRIES = 7;") + 1;
    expect(patternHead).toBe(`[keeper_recall ref=${ref} tool=read] 1 line(s) match /MAX_RETRIES/ of ${lines.length} lines, 2 line(s) of context`);
    expect(patternBody).toEqual([`@@ lines ${at - 2}-${at + 2} @@`, ...lines.slice(at - 3, at + 2)]);
    // Range: lines 3–6, byte for byte.
    const [rangeHead, ...rangeBody] = exchanges[1]!.text.split("\n");
    expect(rangeHead).toStartWith(`[keeper_recall ref=${ref} tool=read] lines 3-6 of ${lines.length} (chars `);
    expect(Buffer.from(rangeBody.join("\n"), "utf8").equals(Buffer.from(lines.slice(2, 6).join("\n"), "utf8"))).toBe(true);

    // Prompt 3: prompt 2's loop (recalls only) collapsed too, naming the recalled ref; no recalled text left.
    const p3 = main.find((r) => humanPromptText(r.body).startsWith("P3"))!;
    const history = p3.body.messages.slice(0, humanPromptIndex(p3.body.messages));
    const chains = history.flatMap((m) => blocksOf(m)).filter((b) => b.type === "text" && String(b.text ?? "").startsWith(CHAIN_HEAD)).map((b) => String(b.text));
    expect(chains).toHaveLength(2);
    expect(chains[1]).toContain(`- keeper_recall(ref=${ref}, pattern=MAX_RETRIES) ref=`);
    expect(chains[1]).toContain(`- keeper_recall(ref=${ref}, startLine=3, endLine=6) ref=`);
    expect(history.flatMap((m) => blocksOf(m)).filter((b) => b.type === "tool_result" || b.type === "tool_use")).toEqual([]);
    expect(JSON.stringify(p3.body.messages)).not.toContain("match /MAX_RETRIES/");
  }, 90_000);
});
