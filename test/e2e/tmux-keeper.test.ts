/**
 * `/keeper` in a real terminal: interactive pi (the TUI, not RPC) in a detached tmux session
 * against the fake Anthropic server. Keys are typed with `tmux send-keys` and the screen is
 * read with `tmux capture-pane`:
 * - the status line carries the "keeper:" label, Pi's context figure and the pruned saving
 *   after a tool loop whose output was stubbed;
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

if (!hasTmux) console.log("[tmux-keeper] tmux is not installed: the terminal e2e is skipped (apt-get install -y tmux to run it)");

/** The editor's current line: the last screen line that starts with the typed command. */
const editorHas = (text: string) => (s: string) => s.split("\n").some((line) => line.includes(text));

let workspace: PiWorkspace | undefined;
let pi: TmuxPi | undefined;
const server = hasTmux ? startFakeAnthropic({ script: [] }) : undefined;

afterAll(async () => {
  pi?.kill();
  await server?.stop();
  workspace?.cleanup();
});

describe.skipIf(!hasTmux)("/keeper in a real terminal (tmux)", () => {
  test("status line, /keeper, Tab completion of set, a session override, did you mean", async () => {
    const big = Array.from({ length: 400 }, (_, i) => `line ${i}: ${"lorem ipsum dolor sit amet ".repeat(3)}`).join("\n");
    workspace = createPiWorkspace({ "big.txt": big });
    // Discipline off: the stub applies at the first flush, whatever the cache.
    writeAgentConfig(workspace, { baseUrl: server!.baseUrl, contextKeeper: { cache: { discipline: false } } });
    server!.setScript([
      { text: "Reading it.", toolCalls: [{ name: "read", input: { path: "big.txt" } }] },
      { text: "The file has 400 lines." },
      { text: "Still here." },
    ]);
    pi = startTmuxPi({ session: `keeper-e2e-${process.pid}`, workspace, label: "tmux-keeper" });
    const { typeText, press, waitForScreen } = pi;

    await waitForScreen((s) => s.includes("keeper:"), "the status line at start", 60_000);

    // A tool loop with a large output; its end flushes and stubs the output.
    typeText("read big.txt please");
    press("Enter");
    await waitForScreen((s) => s.includes("The file has 400 lines."), "the first answer", 60_000);
    typeText("and again");
    press("Enter");
    const afterLoop = await waitForScreen((s) => s.includes("Still here.") && /keeper: [\d.]+k? ctx · −[\d.]+k? pruned/.test(s), "the status line with a saving", 60_000);
    const status = afterLoop.split("\n").find((l) => l.includes("keeper:"))!;
    console.log(`[tmux-keeper] screen bottom:\n${afterLoop.trimEnd().split("\n").slice(-6).join("\n")}`);
    // One context figure, and it agrees with Pi's footer ("0.9%/200k"): same estimate, its precision.
    const ctxTokens = Number(status.match(/keeper: ([\d.]+)k ctx/)![1]) * 1000;
    const footerPercent = Number(afterLoop.match(/([\d.]+)%\/200k/)![1]);
    expect(Math.abs(ctxTokens - (footerPercent / 100) * 200_000)).toBeLessThanOrEqual(0.05 * 200_000 / 100 + 50);

    // /keeper marks what the settings file changed.
    typeText("/keeper");
    press("Enter");
    const view = await waitForScreen((s) => s.includes("changed from the defaults"), "the /keeper view");
    expect(view).toMatch(/cache\.discipline = false +from .*settings\.json \(default true\)/);

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
});
