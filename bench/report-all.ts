/**
 * Timing of `pi-context-keeper report --all` over a generated sessions folder (not a test:
 * absolute times depend on the machine). The folder mixes two generators:
 * - Pi-shaped sessions of every entry kind (`test/support/report/session-generator.ts`:
 *   compactions, branches, model and thinking changes, aborted replies; small contents);
 * - realistic coding sessions (`test/support/report/provider-session.ts`: tool loops of 5–25
 *   steps, outputs up to 24 KB, Anthropic and OpenAI usage), a quarter of them marked as
 *   recorded with the keeper (a `context-keeper/flush` entry), so both report paths run.
 *
 *   npx bun bench/report-all.ts [--sessions 300] [--keep]
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { generateProviderSession, GPT55_CODEX, SONNET45 } from "../test/support/report/provider-session.ts";
import { generateSession, sessionPlanArb } from "../test/support/report/session-generator.ts";
import { probeFileSystem } from "../src/report/cli/file-probe.ts";
import type { AllReportOutput } from "../src/report/cli/run-all.ts";
import { runReportCli } from "../src/report/cli/run-report.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const total = arg("--sessions", 300);
const root = mkdtempSync(join(tmpdir(), "keeper-report-all-bench-"));
const sessions = join(root, "sessions");
const KEEPER_ENTRY = JSON.stringify({ type: "custom", customType: "context-keeper/flush", id: "keeper-mark", parentId: null, timestamp: "2025-11-20T10:00:00Z", data: { version: 2, summaries: [] } });

const generated = Math.round(total * 0.6);
const plans = fc.sample(sessionPlanArb, { seed: 24, numRuns: generated });
let bytes = 0;
plans.forEach((plan, i) => {
  const dir = join(sessions, `--project-${i % 7}--`);
  mkdirSync(dir, { recursive: true });
  const g = generateSession(plan, mkdtempSync(join(root, "gen-")));
  writeFileSync(join(dir, `gen-${i}.jsonl`), g.text);
  bytes += g.text.length;
});
for (let i = 0; i < total - generated; i++) {
  const dir = join(sessions, `--project-${i % 5}--`);
  mkdirSync(dir, { recursive: true });
  const s = generateProviderSession({ seed: 1000 + i, models: [i % 3 === 2 ? GPT55_CODEX : SONNET45], prompts: 3 + (i % 6), dir: mkdtempSync(join(root, "prov-")) });
  const text = i % 4 === 0 ? s.text.replace("\n", `\n${KEEPER_ENTRY}\n`) : s.text;
  writeFileSync(join(dir, `coding-${i}.jsonl`), text);
  bytes += text.length;
}

let stdout = "";
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const cpuStarted = cpu();
const started = performance.now();
const code = runReportCli(["report", "--all", "--json"], {
  stdout: (t) => (stdout += t),
  stderr: () => {},
  stderrIsTTY: false,
  cwd: root,
  sessionsDir: sessions,
  mkdir: () => {},
  writeFile: () => {},
  now: () => performance.now(),
  probeFile: probeFileSystem,
  version: "bench",
});
const seconds = (performance.now() - started) / 1000;
const cpuSeconds = cpu() - cpuStarted;
const out = JSON.parse(stdout) as AllReportOutput;
const requests = out.sessions.reduce((n, s) => n + s.requests, 0);
const sizes = out.sessions.map((s) => statSync(join(sessions, s.file)).size).sort((a, b) => a - b);
console.log(
  `report --all: ${out.sessions.length} sessions reported (${out.skipped.empty.length} without a billed request), ${requests} requests, ` +
    `${(bytes / 1e6).toFixed(1)} MB (largest file ${(sizes.at(-1)! / 1e6).toFixed(2)} MB), ${out.total.recorded_with_keeper.sessions} recorded with the keeper; ` +
    `${seconds.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} s CPU (${((cpuSeconds * 1000) / Math.max(1, out.sessions.length)).toFixed(0)} ms CPU per session, ${((cpuSeconds * 1e6) / Math.max(1, requests)).toFixed(0)} µs per request); exit ${code}`,
);
if (process.argv.includes("--keep")) console.log(`sessions folder kept: ${sessions}`);
else rmSync(root, { recursive: true, force: true });
