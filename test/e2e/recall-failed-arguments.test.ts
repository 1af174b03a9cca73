/**
 * The arguments of a failed call inside a collapsed chain, through the real pi CLI: a `write`
 * of 100 KB fails (its parent is a file), the prompt is answered and the chain collapses at
 * that flush. Its output is a short error; what the model lost is the 100 KB it tried to write,
 * which exists nowhere but in the call. The chain's call line says how to recall the arguments
 * (`arguments=true`), and that recall returns them, page by page, byte for byte.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { MainScript } from "../support/fake-anthropic/index.ts";
import { runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { blocksOf, CHAIN_HEAD, humanPromptText, parsePage, recallExchanges } from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const CONTENT = Array.from({ length: 2000 }, (_, i) => `report line ${String(i).padStart(4, "0")}: ${"quarterly figures ".repeat(2)}`).join("\n");
const WRITE_ARGS = { path: "blocker/report.txt", content: CONTENT };
const RECALL_PROMPT = "Write the report again from what you tried before.";

/** The call line of the failed write in the chain text, and the ref at its end. */
function failedWriteLine(body: { messages: Parameters<typeof blocksOf>[0][] }): { line: string; ref: string } | undefined {
  for (const m of body.messages)
    for (const b of blocksOf(m)) {
      const text = String(b.text ?? "");
      if (b.type !== "text" || !text.startsWith(CHAIN_HEAD)) continue;
      const line = text.split("\n").find((l) => l.startsWith("- write(") && l.includes("(failed"));
      const ref = line?.match(/ ref=(\S+)$/)?.[1];
      if (line && ref) return { line, ref };
    }
  return undefined;
}

describe("a failed call's arguments in a collapsed chain", () => {
  test("a failed 100 KB write: the call line names the arguments' recall, and recall returns them whole", async () => {
    expect(CONTENT.length).toBeGreaterThan(100_000);
    let cursor = 0;
    const first = [{ text: "Writing it.", toolCalls: [{ name: "write", input: WRITE_ARGS }] }, { text: "The write failed: blocker is a file." }];
    const script: MainScript = ({ request }) => {
      const body = request.body;
      if (!humanPromptText(body).includes(RECALL_PROMPT)) return first[cursor++] ?? { text: "(script exhausted)" };
      const found = failedWriteLine(body);
      if (!found) return { text: "No failed write line with a ref." };
      const pages = recallExchanges(body.messages);
      const last = pages.at(-1);
      const next = last ? parsePage(last.text)?.nextOffset : 0;
      if (next === undefined) return { text: "Recovered it." };
      return { toolCalls: [{ name: "keeper_recall", input: { ref: found.ref, arguments: true, ...(next ? { offset: next } : {}) } }] };
    };
    const run = await runPi({
      mode: "rpc",
      files: { blocker: "a file, not a folder\n" },
      contextKeeper: { summarizer: { mode: "extractive" }, pruning: { budgetTrigger: { enabled: false } } },
      script,
      prompts: ["Write the quarterly report to blocker/report.txt.", RECALL_PROMPT],
    });
    workspaces.push(run.workspace);
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);

    // The first request of the second prompt: the chain collapsed, its failed write's line says how to get the arguments.
    const second = run.prompts[1]!.requests.find((r) => r.kind === "main")!;
    const found = failedWriteLine(second.body)!;
    expect(found).toBeDefined();
    expect(found.line).toContain("arguments=true");
    expect(JSON.stringify(second.body.messages)).not.toContain("report line 1999");

    // Every page the model asked for, put together: the arguments as the call carried them.
    const last = run.mainRequests.at(-1)!;
    const exchanges = recallExchanges(last.body.messages);
    expect(exchanges.length).toBeGreaterThan(0);
    expect(exchanges.every((e) => !e.isError)).toBe(true);
    const pages = exchanges.map((e) => parsePage(e.text)!);
    expect(pages.every((p) => p !== undefined)).toBe(true);
    const text = pages.map((p) => p.body).join("");
    expect(JSON.parse(text)).toEqual(WRITE_ARGS);
    expect(exchanges[0]!.text.startsWith(`[keeper_recall ref=${found.ref} tool=write arguments]`)).toBe(true);
  }, 120_000);
});
