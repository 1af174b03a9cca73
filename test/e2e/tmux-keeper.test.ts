/**
 * `/keeper` in a real terminal: interactive pi (the TUI, not RPC) in a detached tmux session
 * against the fake Anthropic server. Keys are typed with `tmux send-keys` and the screen is
 * read with `tmux capture-pane`:
 * - the status line carries the "keeper:" label, Pi's context figure and the pruned saving
 *   after a tool loop whose output was stubbed;
 * - the first screens of `/keeper stats` and `/keeper` speak plain words (no internal word of
 *   the code) and their "kept out of the next request" figure is the status line's "−Xk pruned";
 * - `/keeper` marks the key the settings file changed;
 * - Tab completes the subcommand, the key and the value of `/keeper set`, and the change
 *   shows as a session override;
 * - an unknown subcommand gets "did you mean".
 * Without tmux on the machine the test is skipped with a printed notice.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { startFakeAnthropic } from "../support/fake-anthropic/server.ts";
import { createPiWorkspace, writeAgentConfig, type PiWorkspace } from "../support/scenario-workspace.ts";
import { hasTmux, startTmuxPi, type TmuxPi } from "../support/tmux-pi.ts";
import { internalWordsIn } from "../support/plain-words.ts";
import { formatTokenCount } from "../../src/ui/status-line.ts";

if (!hasTmux) console.log("[tmux-keeper] tmux is not installed: the terminal e2e is skipped (apt-get install -y tmux to run it)");

/**
 * The answer to a command on screen: the lines from the last one that starts with `first`
 * down to the editor's frame (Pi draws notifications above it).
 */
function answerOn(screen: string, first: RegExp): string[] {
  const lines = screen.split("\n");
  let start = -1;
  lines.forEach((l, i) => {
    if (first.test(l.trim())) start = i;
  });
  if (start < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(start)) {
    if (/^─{20,}/.test(l.trim())) break;
    out.push(l.trim());
  }
  return out.filter((l) => l !== "");
}

const keptOut = (lines: readonly string[]): number => {
  const m = lines.join("\n").match(/kept out of the next request: ≈ ([\d,]+) tokens/);
  return m ? Number(m[1]!.replace(/,/g, "")) : Number.NaN;
};

/** The editor's current line: the last screen line that starts with the typed command. */
const editorHas = (text: string) => (s: string) => s.split("\n").some((line) => line.includes(text));

let workspace: PiWorkspace | undefined;
let pi: TmuxPi | undefined;
const server = hasTmux ? startFakeAnthropic({ script: [] }) : undefined;
let compactWorkspace: PiWorkspace | undefined;
let compactPi: TmuxPi | undefined;
const compactServer = hasTmux ? startFakeAnthropic({ script: [] }) : undefined;

afterAll(async () => {
  pi?.kill();
  compactPi?.kill();
  await server?.stop();
  await compactServer?.stop();
  workspace?.cleanup();
  compactWorkspace?.cleanup();
});

const bigFile = () => Array.from({ length: 400 }, (_, i) => `line ${i}: ${"lorem ipsum dolor sit amet ".repeat(3)}`).join("\n");

/**
 * Pi started on `workspace` against `fake`: a tool loop reading big.txt (its end flushes and
 * stubs the output), then a second prompt; the screen once the second answer and `status` show.
 */
async function readLoopIn(fake: NonNullable<typeof server>, tpi: TmuxPi, status: RegExp): Promise<string> {
  fake.setScript([
    { text: "Reading it.", toolCalls: [{ name: "read", input: { path: "big.txt" } }] },
    { text: "The file has 400 lines." },
    { text: "Still here." },
  ]);
  await tpi.waitForScreen((s) => s.includes("keeper:"), "the status line at start", 60_000);
  tpi.typeText("read big.txt please");
  tpi.press("Enter");
  await tpi.waitForScreen((s) => s.includes("The file has 400 lines."), "the first answer", 60_000);
  tpi.typeText("and again");
  tpi.press("Enter");
  return tpi.waitForScreen((s) => s.includes("Still here.") && status.test(s), "the second answer and the status line", 60_000);
}

describe.skipIf(!hasTmux)("/keeper in a real terminal (tmux)", () => {
  test("status line, /keeper, Tab completion of set, a session override, did you mean", async () => {
    workspace = createPiWorkspace({ "big.txt": bigFile() });
    // Discipline off: the stub applies at the first flush, whatever the cache.
    writeAgentConfig(workspace, { baseUrl: server!.baseUrl, contextKeeper: { cache: { discipline: false } } });
    pi = startTmuxPi({ session: `keeper-e2e-${process.pid}`, workspace, label: "tmux-keeper" });
    const { typeText, press, waitForScreen } = pi;
    const afterLoop = await readLoopIn(server!, pi, /keeper: [\d.]+k? ctx · −[\d.]+k? pruned/);
    const status = afterLoop.split("\n").find((l) => l.includes("keeper:"))!;
    console.log(`[tmux-keeper] screen bottom:\n${afterLoop.trimEnd().split("\n").slice(-6).join("\n")}`);
    // One context figure, and it agrees with Pi's footer ("0.9%/200k"): same estimate, its precision.
    const ctxTokens = Number(status.match(/keeper: ([\d.]+)k ctx/)![1]) * 1000;
    const footerPercent = Number(afterLoop.match(/([\d.]+)%\/200k/)![1]);
    expect(Math.abs(ctxTokens - (footerPercent / 100) * 200_000)).toBeLessThanOrEqual(0.05 * 200_000 / 100 + 50);

    // /keeper stats: plain words, and the figure the status line shows.
    const pruned = status.match(/−([\d.]+k?) pruned/)![1]!;
    typeText("/keeper stats "); // the space closes the completion menu, so Enter submits
    press("Enter");
    const statsScreen = await waitForScreen((s) => answerOn(s, /^flushes that found something to prune: \d+/).some((l) => l.startsWith("kept out of the next request")), "the /keeper stats answer");
    const stats = answerOn(statsScreen, /^flushes that found something to prune: \d+/);
    console.log(`[tmux-keeper] /keeper stats:\n${stats.join("\n")}`);
    expect(internalWordsIn(stats.join("\n"))).toEqual([]);
    expect(formatTokenCount(keptOut(stats))).toBe(pruned);
    expect(stats.join("\n")).toContain(`(the status line's "−${pruned} pruned")`);
    // No compaction and no thinking stripped: the running total is the same figure (each flush
    // rounds once; a collapsed chain drops the separators of a few messages).
    const total = Number(stats.join("\n").match(/removed by all flushes together: ≈ ([\d,]+) tokens/)![1]!.replace(/,/g, ""));
    expect(Math.abs(total - keptOut(stats))).toBeLessThanOrEqual(10);

    // /keeper: the same figure; marks what the settings file changed; plain words.
    typeText("/keeper");
    press("Enter");
    const view = await waitForScreen((s) => s.includes("changed from the defaults"), "the /keeper view");
    expect(view).toMatch(/cache\.discipline = false +from .*settings\.json \(default true\)/);
    const viewLines = answerOn(view, /^context-keeper: on$/);
    console.log(`[tmux-keeper] /keeper:\n${viewLines.join("\n")}`);
    expect(internalWordsIn(viewLines.join("\n"))).toEqual([]);
    expect(keptOut(viewLines)).toBe(keptOut(stats));

    // Tab completes the subcommand, then the key, then the value.
    typeText("/keeper se");
    await waitForScreen((s) => s.includes("change one setting for this session"), "the subcommand menu");
    press("Tab");
    await waitForScreen(editorHas("/keeper set "), "the completed subcommand");
    typeText("thinkingStrip.mo");
    await waitForScreen((s) => s.includes("auto|off|flush-gated"), "the key menu");
    press("Tab");
    await waitForScreen(editorHas("/keeper set thinkingStrip.mode "), "the completed key");
    typeText("of");
    await waitForScreen((s) => /(^|\s)off(\s|$)/m.test(s.split("\n").slice(-12).join("\n")), "the value menu");
    press("Tab");
    await waitForScreen(editorHas("/keeper set thinkingStrip.mode off"), "the completed value");
    press("Enter");
    await waitForScreen((s) => s.includes('thinkingStrip.mode = "off" for this session'), "the answer to set");

    typeText("/keeper");
    press("Enter");
    const marked = await waitForScreen((s) => /\* thinkingStrip\.mode = "off" +session override/.test(s), "the override marked in /keeper");
    expect(marked).toContain("1 session override");

    typeText("/keeper stat "); // the space closes the completion menu, so Enter submits what was typed
    press("Enter");
    await waitForScreen((s) => s.includes('unknown subcommand "stat". Did you mean "stats"'), "did you mean");
  }, 240_000);

  test("/async-compact-now: the status line shows the compacted context at once", async () => {
    compactWorkspace = createPiWorkspace({ "big.txt": bigFile() });
    // Pi keeps only the last 500 tokens: the read and its answers are old enough to compact.
    writeAgentConfig(compactWorkspace, { baseUrl: compactServer!.baseUrl, settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 500 } } });
    compactPi = startTmuxPi({ session: `keeper-compact-e2e-${process.pid}`, workspace: compactWorkspace, label: "tmux-keeper" });
    const { typeText, press, waitForScreen } = compactPi;
    const before = await readLoopIn(compactServer!, compactPi, /keeper: [\d.]+k? ctx/);
    const statusBefore = before.split("\n").find((l) => l.includes("keeper:"))!.trim();
    typeText("/async-compact-now ");
    press("Enter");
    const after = await waitForScreen((s) => /async compaction: applied/.test(s) && /\?\/200k/.test(s), "the compaction applied (Pi's footer: ?/200k)", 60_000);
    const statusAfter = await waitForScreen((s) => /keeper: ~[\d.]+k? ctx/.test(s), "the status line after the compaction", 10_000).then((s) => s.split("\n").find((l) => l.includes("keeper:"))!.trim());
    console.log(`[tmux-keeper] /async-compact-now: "${statusBefore}" → "${statusAfter}"`);
    expect(after).toContain("async compaction: applied");
    // Pi has no figure until the next answer ("?" in its footer): the status line estimates the compacted context.
    expect(statusAfter).toMatch(/^keeper: ~[\d.]+k? ctx · (nothing pruned yet|−[\d.]+k? pruned)/);
    expect(statusAfter).not.toBe(statusBefore);
  }, 240_000);
});
