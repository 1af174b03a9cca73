/**
 * `/keeper` subcommands through the real pi CLI (RPC), with no model request:
 * - a summarizer model that does not exist is reported at start and in `/keeper`;
 * - `/keeper now` on an empty session flushes nothing and counts nothing;
 * - `/keeper set` validates, `/keeper save` writes the agent's settings file keeping its other
 *   keys, and the saved key then shows as coming from that file, not as an override.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runPi, type PiWorkspace } from "../support/pi-runner.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => {
  for (const w of workspaces) w.cleanup();
});

describe("/keeper subcommands in pi", () => {
  test("model warning, empty /keeper now, set, save, the saved key in /keeper", async () => {
    const run = await runPi({
      mode: "rpc",
      keepWorkspace: true,
      contextKeeper: { summarizer: { mode: "model", model: "nope/missing-model" } },
      prompts: ["/keeper now", "/keeper stats", "/keeper", "/keeper set pruning.minBatchChars 3000", "/keeper set pruning.minBatchChar 3", "/keeper save", "/keeper"],
    });
    workspaces.push(run.workspace);
    expect(run.requests).toHaveLength(0);
    const messages = run.notifications.map((n) => n.message);
    const at = (needle: string) => messages.findIndex((m) => m.includes(needle));

    // At start (before any command), and again inside /keeper.
    const startWarning = at('summarizer.model "nope/missing-model" was not found');
    expect(startWarning).toBeGreaterThanOrEqual(0);
    expect(run.notifications[startWarning]!.notifyType).toBe("warning");
    expect(startWarning).toBeLessThan(at("nothing to flush yet"));

    expect(messages).toContain("context-keeper: nothing to flush yet — the model has not answered in this session (no flush was counted)");
    expect(messages.find((m) => m.startsWith("flushes that found something to prune:"))).toContain("flushes that found something to prune: 0");

    const views = messages.filter((m) => m.startsWith("context-keeper: on"));
    expect(views).toHaveLength(2);
    expect(views[0]).toContain('warning: summarizer.model "nope/missing-model" was not found');
    expect(views[0]).toMatch(/summarizer\.model = "nope\/missing-model" +from .*settings\.json/);

    expect(messages.some((m) => m.includes("pruning.minBatchChars = 3000 for this session (was 1200)"))).toBe(true);
    expect(messages.some((m) => m.includes('unknown setting "pruning.minBatchChar". Did you mean "pruning.minBatchChars"?'))).toBe(true);

    const settingsPath = join(run.workspace.agentDir, "settings.json");
    expect(messages.some((m) => m.includes(`saved to ${settingsPath} (your Pi settings, read in every project): pruning.minBatchChars = 3000`))).toBe(true);
    const saved = JSON.parse(readFileSync(settingsPath, "utf8"));
    expect(saved.contextKeeper).toEqual({ summarizer: { mode: "model", model: "nope/missing-model" }, pruning: { minBatchChars: 3000 } });
    expect(saved.cacheWarming).toBe("off");
    expect(saved.defaultProvider).toBe("fake-anthropic");

    // After the save the value comes from the file; no override is left.
    expect(views[1]).toMatch(/ {3}pruning\.minBatchChars = 3000 +from .*settings\.json \(default 1200\)/);
    expect(views[1]).not.toContain("session override");
    // Nothing was flushed: no state entry in the session.
    expect(run.sessionEntries.filter((e) => String(e.customType ?? "").startsWith("context-keeper"))).toHaveLength(0);
  }, 90_000);
});

describe("/keeper off and /keeper on in the middle of a session", () => {
  test("off: the next request carries the raw output; on: the same stub, restored from the session; no request refused", async () => {
    const big = Array.from({ length: 300 }, (_, i) => `row ${i}: ${"alpha beta gamma delta ".repeat(3)}`).join("\n");
    const run = await runPi({
      mode: "rpc",
      files: { "big.txt": big },
      // Chain compression off: the read's own stub is what comes back. With it on, the second
      // flush (end of "first", before /keeper off) collapses the read's chain, and the chain line
      // is what comes back (measured: the session's frontier entry before "/keeper off").
      contextKeeper: { cache: { discipline: false }, summarizer: { mode: "extractive" }, pruning: { chainCompression: { enabled: false } } },
      script: [{ text: "Reading.", toolCalls: [{ name: "read", input: { path: "big.txt" } }] }, { text: "Read it." }, { text: "one" }, { text: "two" }, { text: "three" }],
      prompts: ["read big.txt", "first", "/keeper off", "second", "/keeper on", "third"],
    });
    workspaces.push(run.workspace);
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    expect(run.mainRequests).toHaveLength(5);
    // Size of the read's tool_result as each request carried it.
    const resultChars = (i: number): number => {
      for (const m of run.mainRequests[i]!.body.messages) {
        if (!Array.isArray(m.content)) continue;
        for (const b of m.content) if (b.type === "tool_result") return JSON.stringify(b.content).length;
      }
      return -1;
    };
    const sizes = [2, 3, 4].map(resultChars);
    console.log(`[keeper off/on] tool_result chars: on ${sizes[0]}, off ${sizes[1]}, on again ${sizes[2]} (file ${big.length})`);
    expect(sizes[0]!).toBeLessThan(big.length / 4); // stubbed after the first request's flush
    expect(sizes[1]!).toBeGreaterThanOrEqual(big.length); // off: as Pi has it
    expect(sizes[2]).toBe(sizes[0]); // on again: the same stub, restored from the session
    // The read's output is not sent raw, its ref is.
    const fourth = JSON.stringify(run.mainRequests[4]!.body.messages);
    expect(fourth).not.toContain("row 299:");
    expect(fourth).toMatch(/ref=toolu_/);
    const messages = run.notifications.map((n) => n.message);
    expect(messages.some((m) => m.includes("context-keeper is off from the next request"))).toBe(true);
    expect(messages.some((m) => m.includes("context-keeper is on from the next request"))).toBe(true);
  }, 120_000);
});

describe("the status line follows the context through a tool loop", () => {
  test("a new figure at every request of the loop; the last one is Pi's own context estimate", async () => {
    const { generateScenario } = await import("../support/scenario.ts");
    const scenario = generateScenario({ seed: 11, prompts: 2, stepsPerPrompt: [7, 8], files: 6, fileBytes: [4096, 16384] });
    const run = await runPi({
      mode: "rpc",
      files: scenario.files,
      script: scenario.steps,
      contextKeeper: { summarizer: { mode: "extractive" } },
      prompts: [...scenario.prompts, { command: { type: "get_session_stats" } }],
    });
    workspaces.push(run.workspace);
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    const statuses = run.records
      .filter((r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === "context-keeper")
      .map((r) => String(r.statusText));
    for (const s of statuses) expect(s).toMatch(/^keeper: ~?[\d.]+[kM]? ctx · (−[\d.]+[kM]? pruned|nothing pruned yet)( · summaries \$[\d.]+)?( · summarizing \d+\/\d+ batches…)?$/);
    const figures = statuses.map((s) => s.match(/^keeper: ~?([\d.]+[kM]?) ctx/)![1]);
    const distinct = figures.filter((f, i) => i === 0 || f !== figures[i - 1]);
    console.log(`[status line] ${run.mainRequests.length} requests, ${distinct.length} distinct context figures: ${distinct.join(" → ")}; last: ${statuses.at(-1)}`);
    // The figure moves during the loops, not only at flushes (2 prompts → at most 2 flushes).
    expect(distinct.length).toBeGreaterThanOrEqual(6);
    expect(statuses.some((s) => s.includes("pruned") && !s.includes("nothing pruned"))).toBe(true);
    // Agrees with Pi: the footer's estimate, formatted as the footer formats it.
    const stats = run.responses.find((r) => r.command === "get_session_stats") as { data?: { contextUsage?: { tokens: number | null } } } | undefined;
    const tokens = stats?.data?.contextUsage?.tokens;
    expect(typeof tokens).toBe("number");
    const { formatTokenCount } = await import("../../src/ui/status-line.ts");
    expect(statuses.at(-1)!.startsWith(`keeper: ${formatTokenCount(tokens!)} ctx`)).toBe(true);
  }, 120_000);
});

describe("an untrusted project's settings file", () => {
  test("/keeper says the project's settings were ignored and why; with --approve they apply", async () => {
    const files = { ".pi/settings.json": JSON.stringify({ contextKeeper: { enabled: false } }) };
    const untrusted = await runPi({ mode: "rpc", files, prompts: ["/keeper"] });
    workspaces.push(untrusted.workspace);
    const view = untrusted.notifications.map((n) => n.message).find((m) => m.startsWith("context-keeper:"))!;
    console.log(`[keeper untrusted] ${view.split("\n").slice(0, 4).join(" | ")}`);
    expect(view.split("\n")[0]).toBe("context-keeper: on");
    expect(view).not.toContain("no contextKeeper in any settings file");
    expect(view).toContain(`the project's settings were ignored: project not trusted (${join(untrusted.workspace.cwd, ".pi", "settings.json")} sets contextKeeper;`);
    const approved = await runPi({ mode: "rpc", files, prompts: ["/keeper"], args: ["--approve"] });
    workspaces.push(approved.workspace);
    const on = approved.notifications.map((n) => n.message).find((m) => m.startsWith("context-keeper:"))!;
    expect(on.split("\n")[0]).toBe(`context-keeper: off (enabled = false in ${join(approved.workspace.cwd, ".pi", "settings.json")}); history goes to the model unchanged`);
    expect(on).not.toContain("ignored");
  }, 90_000);
});

describe("the status line on a resumed session (pi -c)", () => {
  test("shows what the keeper prunes before any request, the figure /keeper stats gives", async () => {
    const big = Array.from({ length: 300 }, (_, i) => `row ${i}: ${"alpha beta gamma delta ".repeat(3)}`).join("\n");
    const first = await runPi({
      mode: "rpc",
      keepWorkspace: true,
      files: { "big.txt": big },
      contextKeeper: { cache: { discipline: false } },
      script: [{ text: "Reading.", toolCalls: [{ name: "read", input: { path: "big.txt" } }] }, { text: "Read it." }],
      prompts: ["read big.txt"],
    });
    workspaces.push(first.workspace);
    const statusOf = (r: typeof first) =>
      r.records.filter((x) => x.type === "extension_ui_request" && x.method === "setStatus" && x.statusKey === "context-keeper").map((x) => String(x.statusText));
    const last = statusOf(first).at(-1)!;
    expect(last).toMatch(/−[\d.]+k? pruned/);
    const resumed = await runPi({ mode: "rpc", resume: first.workspace, contextKeeper: { cache: { discipline: false } }, prompts: ["/keeper stats"] });
    expect(resumed.requests).toHaveLength(0);
    const atStart = statusOf(resumed);
    console.log(`[keeper resume] before: ${last}; after pi -c: ${atStart.join(" | ")}`);
    const pruned = last.match(/−([\d.]+k?) pruned/)![1]!;
    expect(atStart[0]).toContain(`−${pruned} pruned`);
    const stats = resumed.notifications.map((n) => n.message).find((m) => m.includes("kept out of the next request"))!;
    expect(stats).toContain(`(the status line's "−${pruned} pruned")`);
  }, 120_000);
});
