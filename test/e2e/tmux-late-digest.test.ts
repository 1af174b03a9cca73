/**
 * The late digest in a real terminal: interactive pi (the TUI) in tmux against the fake server,
 * the 110k-window threshold scenario with instant answers and 2 s summaries, the first one held
 * until Pi compacted without it (late on any machine, however loaded). The long tool loop
 * crosses Pi's threshold while the job runs; after the 1 s stall budget the user sees the notice
 * that a digest was applied in its place, and the loop goes on to its answer. Flushes inside
 * the loop are off (with them this loop stays under the threshold). Without tmux on
 * the machine the test is skipped with a printed notice.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { lateSummaryWire, sandboxFiles } from "../support/compaction/e2e-wire.ts";
import { FILES, PROMPTS, THRESHOLD_SETUP, thresholdScript } from "../support/compaction/threshold-wire.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/server.ts";
import { createPiWorkspace, writeAgentConfig, type PiWorkspace } from "../support/scenario-workspace.ts";
import { hasTmux, startTmuxPi, type TmuxPi } from "../support/tmux-pi.ts";

if (!hasTmux) console.log("[tmux-late-digest] tmux is not installed: the terminal e2e is skipped (apt-get install -y tmux to run it)");

let workspace: PiWorkspace | undefined;
let pi: TmuxPi | undefined;
// The loop pauses at the request after the digest until the notice was read (a later compaction
// redraws Pi's chat and takes the notice with it).
const wire = lateSummaryWire(thresholdScript(0), { pauseAfterCompaction: true });
const server = hasTmux ? startFakeAnthropic({ script: wire.script, sideRouter: wire.sideRouter }) : undefined;

afterAll(async () => {
  pi?.kill();
  await server?.stop();
  workspace?.cleanup();
});

describe.skipIf(!hasTmux)("a late job in a real terminal (tmux)", () => {
  test("the digest notice shows, the loop runs on to its answer", async () => {
    workspace = createPiWorkspace(sandboxFiles(FILES));
    // Flushes inside the loop keep this loop under Pi's threshold (no compaction to wait for);
    // turned off here so that the loop crosses it while the job runs.
    writeAgentConfig(workspace, {
      baseUrl: server!.baseUrl,
      model: THRESHOLD_SETUP.model,
      settings: THRESHOLD_SETUP.settings,
      contextKeeper: { pruning: { loopFlush: { enabled: false } } },
    });
    pi = startTmuxPi({
      session: `late-digest-e2e-${process.pid}`,
      workspace,
      env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: THRESHOLD_SETUP.startRatio },
      label: "tmux-late-digest",
    });
    await pi.waitForScreen((s) => s.includes("keeper:"), "the status line at start", 60_000);
    pi.typeText(PROMPTS[0]);
    pi.press("Enter");
    await pi.waitForScreen((s) => s.includes("first done."), "the first answer", 60_000);
    pi.typeText(PROMPTS[1]);
    pi.press("Enter");
    const noticed = await pi.waitForScreen((s) => s.includes("applied an extractive digest"), "the late-digest notice", 90_000);
    const line = noticed.split("\n").find((l) => l.includes("applied an extractive digest"))!;
    console.log(`[tmux-late-digest] notice: ${line.trim()}`);
    expect(line).toMatch(/the background summary was not ready; applied an extractive digest \(context was [\d,]+ tokens\)/);
    wire.resume();
    const done = await pi.waitForScreen((s) => s.includes("second done."), "the loop's answer", 90_000);
    expect(done).not.toMatch(/error/i);
  }, 240_000);
});
