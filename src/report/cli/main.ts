/** Process entry of `pi-context-keeper` (run under bun by `bin/pi-context-keeper.mjs`). */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { probeFileSystem } from "./file-probe.ts";
import { packageVersion } from "./locations.ts";
import { piCompactionSettingsLookup } from "./pi-settings.ts";
import { runReportCli } from "./run-report.ts";

const code = runReportCli(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stderrIsTTY: process.stderr.isTTY === true,
  cwd: process.cwd(),
  // Pi keeps sessions in <agent dir>/sessions (docs/session-format.md); getAgentDir follows PI_CODING_AGENT_DIR.
  sessionsDir: join(getAgentDir(), "sessions"),
  mkdir: (p) => mkdirSync(p, { recursive: true }),
  writeFile: (p, t) => writeFileSync(p, t),
  now: () => performance.now(),
  probeFile: probeFileSystem,
  version: packageVersion(),
  piCompaction: piCompactionSettingsLookup(getAgentDir()),
});
process.exitCode = code;
