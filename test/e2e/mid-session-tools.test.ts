/**
 * Tools and prompt sections that change mid-session (issue 23 item 3), on the wire: the real pi
 * with a test extension that activates a tool at the third prompt (test/support/late-tool/),
 * against the fake Anthropic server, bare and with the keeper, each beside a control run in
 * which the tool never comes.
 *
 * Pi keeps the prompt and tool declarations as system messages in the transcript and appends
 * a change as a new one. On a model that takes them mid-conversation
 * (`supportsMidConvoSystemMessages` + `supportsMidConvoToolChanges`, Claude Opus 4.8 and later)
 * pi-ai sends the change in place — the request's tool list stays the initial one — and the
 * cached prefix survives; on others the tool list at the head changes and everything is
 * written again, bare or not.
 *
 * What the keeper must not add: a rewrite of its own. It renders at `context_with_system`
 * (Pi's system messages in place; a changed `context` list would make Pi fold them into the
 * leading one, changing the tool list), and a tool change keys its cache ledger only on models
 * where it rewrites the prefix (src/cache/tool-changes.ts; otherwise the ledger took the cache
 * for lost and re-planned cold, rewriting history where bare Pi read it).
 *
 * A rewrite here: a request that reads back less than the request before it read and wrote.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { wireCost } from "../support/compaction/threshold-wire.ts";
import { createPiWorkspace, REPO_ROOT, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { expectCleanRun } from "./support/wire-checks.ts";
import { runCost, WIRE_APIS, type WireRecord } from "./support/wire-apis.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const LATE_TOOL = join(REPO_ROOT, "test/support/late-tool/index.ts");
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" } };
/** What pi-ai's registry says of Claude Opus 4.8 (dist/providers/data/anthropic.json). */
const IN_PLACE = { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true };
const MODEL = { id: "claude-opus-4-8", contextWindow: 1_000_000 };

/** Requests that had to write again part of what the request before left cached, and how many tokens. */
function rewrites(main: RecordedRequest[]): { count: number; tokens: number; at: number[] } {
  const at: number[] = [];
  let tokens = 0;
  main.forEach((r, i) => {
    const prev = main[i - 1]?.response?.usage;
    if (!prev) return;
    const lost = prev.cache_read_input_tokens + prev.cache_creation_input_tokens - r.response!.usage.cache_read_input_tokens;
    if (lost > 0) {
      at.push(i);
      tokens += lost;
    }
  });
  return { count: at.length, tokens, at };
}

const systemMessages = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === "system");
const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name).join(",");
/** Where the late tool is declared: "list" (the request's tool list), "inline" (a tool_addition block), or "-". */
const declared = (r: RecordedRequest): string =>
  toolNames(r).includes("late_probe")
    ? "list"
    : systemMessages(r).some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_addition" && JSON.stringify(b).includes("late_probe")))
      ? "inline"
      : "-";

describe("a tool added mid-session", () => {
  const scenario = generateScenario({ seed: 23, prompts: 5, stepsPerPrompt: [5, 8], files: 10, fileBytes: [8192, 32768] });

  const run = async (o: { extension: boolean; at: number; when: "prompt" | "loop"; section?: boolean; compat?: Record<string, unknown> }): Promise<PiRunResult> => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: scenario.steps, idNonce: "same" });
    try {
      const r = await runPi({
        server,
        prompts: scenario.prompts,
        mode: "rpc",
        workspace,
        model: MODEL,
        contextKeeper: KEEPER,
        args: ["-e", LATE_TOOL],
        env: { PI_LATE_TOOL_AT: String(o.at), PI_LATE_TOOL_WHEN: o.when, ...(o.section ? { PI_LATE_TOOL_SECTION: "1" } : {}) },
        timeoutMs: 180_000,
        extension: o.extension,
        ...(o.compat ? { compat: o.compat } : {}),
      });
      expectCleanRun(r, scenario.steps.length);
      return r;
    } finally {
      await server.stop();
    }
  };

  /** The four runs of one case: bare and keeper, each without the late tool and with it. */
  const measure = async (label: string, o: { when: "prompt" | "loop"; section?: boolean; compat?: Record<string, unknown> }) => {
    const [bare0, bare3, keeper0, keeper3] = [
      await run({ ...o, extension: false, at: 0 }),
      await run({ ...o, extension: false, at: 3 }),
      await run({ ...o, extension: true, at: 0 }),
      await run({ ...o, extension: true, at: 3 }),
    ];
    const [b0, b3, k0, k3] = [bare0, bare3, keeper0, keeper3].map((r) => rewrites(r.mainRequests));
    const added = keeper3.mainRequests.findIndex((r) => declared(r) !== "-");
    console.log(
      `[mid-session tools] ${label}: tool declared from request ${added} (${declared(keeper3.mainRequests[added]!)} with the keeper, ${declared(bare3.mainRequests[added]!)} bare); ` +
        `rewrites bare ${b0.count} → ${b3.count} (${b0.tokens} → ${b3.tokens} tokens), keeper ${k0.count} → ${k3.count} (${k0.tokens} → ${k3.tokens} tokens, at ${k3.at.join(",")}); ` +
        `cost bare $${wireCost(bare0.requests).toFixed(4)} → $${wireCost(bare3.requests).toFixed(4)}, keeper $${wireCost(keeper0.requests).toFixed(4)} → $${wireCost(keeper3.requests).toFixed(4)}`,
    );
    return { bare0, bare3, keeper0, keeper3, b0, b3, k0, k3, added };
  };

  test("in the tool loop, on a model that takes tool changes in place: no rewrite bare, none added by the keeper; the patch stays in place", async () => {
    const m = await measure("in the loop, in place", { when: "loop", compat: IN_PLACE });
    expect(m.added).toBeGreaterThan(0);
    expect(m.b3.count).toBe(m.b0.count);
    // The keeper's own rewrites (its flushes), and not one more.
    expect(m.k3.count).toBe(m.k0.count);
    expect(m.k3.at).toEqual(m.k0.at);
    // The tool list never changes; the tool comes in a system message, as bare Pi sends it.
    for (const r of [m.keeper3, m.bare3]) expect(new Set(r.mainRequests.map(toolNames)).size).toBe(1);
    expect(m.keeper3.mainRequests.slice(m.added).every((r) => declared(r) === "inline")).toBe(true);
    expect(m.keeper3.mainRequests.map((r) => systemMessages(r).length)).toEqual(m.bare3.mainRequests.map((r) => systemMessages(r).length));
  }, 600_000);

  test("at the start of a prompt, with a prompt section too: the keeper adds no rewrite", async () => {
    const m = await measure("at a prompt with a section, in place", { when: "prompt", section: true, compat: IN_PLACE });
    expect(m.b3.count).toBe(m.b0.count);
    expect(m.k3.at).toEqual(m.k0.at);
    expect(m.keeper3.mainRequests.slice(m.added).every((r) => declared(r) === "inline" && systemMessages(r).some((s) => JSON.stringify(s).includes("Late notes")))).toBe(true);
  }, 600_000);

  test("on a model that takes no mid-conversation changes: the tool list changes and both rewrite once; the keeper no more than bare", async () => {
    const m = await measure("in the loop, folded", { when: "loop" });
    expect(m.b3.count).toBe(m.b0.count + 1);
    expect(m.k3.count - m.k0.count).toBeLessThanOrEqual(m.b3.count - m.b0.count);
    expect(declared(m.keeper3.mainRequests[m.added]!)).toBe("list");
  }, 600_000);

  test("on Codex (gpt-5.6-terra as the registry has it: tools in additional_tools items, changes in place): the keeper adds no rewrite", async () => {
    const codex = WIRE_APIS["openai-codex-responses"];
    const codexRun = async (extension: boolean, at: number) => {
      const workspace = createPiWorkspace(scenario.files);
      workspaces.push(workspace);
      const server = codex.start({ script: scenario.steps, idNonce: "same" });
      try {
        const r = await runPi({ server, prompts: scenario.prompts, mode: "rpc", workspace, model: { contextWindow: 1_000_000 }, thinking: "medium", extension, contextKeeper: KEEPER, args: ["-e", LATE_TOOL], env: { PI_LATE_TOOL_AT: String(at), PI_LATE_TOOL_WHEN: "loop" }, timeoutMs: 180_000 });
        expectCleanRun(r as never, scenario.steps.length);
        return r;
      } finally {
        await server.stop();
      }
    };
    /** Requests that did not read the whole previous prompt back. */
    const codexRewrites = (main: WireRecord[]) =>
      main.flatMap((r, i) => (i > 0 && codex.usageOf(r)!.cachedTokens < codex.fullRead(codex.usageOf(main[i - 1]!)!.promptTokens) ? [i] : []));
    const [bare0, bare3, keeper0, keeper3] = [await codexRun(false, 0), await codexRun(false, 3), await codexRun(true, 0), await codexRun(true, 3)];
    const at = [bare0, bare3, keeper0, keeper3].map((r) => codexRewrites(r.mainRequests as WireRecord[]));
    const declaredLate = (r: WireRecord) => JSON.stringify(r.effectiveBody ?? r.body).includes("late_probe");
    const added = (keeper3.mainRequests as WireRecord[]).findIndex(declaredLate);
    console.log(
      `[mid-session tools] Codex, in the loop: tool declared from request ${added}; rewrites bare ${at[0]!.length} → ${at[1]!.length}, keeper ${at[2]!.length} → ${at[3]!.length} (at ${at[3]!.join(",")}); ` +
        `cost bare $${runCost(codex, bare0.requests as WireRecord[]).toFixed(4)} → $${runCost(codex, bare3.requests as WireRecord[]).toFixed(4)}, keeper $${runCost(codex, keeper0.requests as WireRecord[]).toFixed(4)} → $${runCost(codex, keeper3.requests as WireRecord[]).toFixed(4)}`,
    );
    expect(added).toBeGreaterThan(0);
    expect(at[1]).toEqual(at[0]);
    expect(at[3]).toEqual(at[2]);
  }, 600_000);
});
