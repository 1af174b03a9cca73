#!/usr/bin/env node
// pi-context-keeper CLI. The code is TypeScript, which plain Node does not run from a package,
// so this wrapper picks a runner for the TypeScript entry (src/report/cli/main.ts):
//  1. bun: the dev dependency in a clone's node_modules/.bin (or this process, when it is bun).
//     Arguments, stdio and the exit code pass through. A SIGINT/SIGTERM/SIGHUP to this wrapper
//     kills the replay with SIGKILL: bun runs the replay as one synchronous loop and would only
//     see a forwarded signal at its end; it writes nothing but finished charts.
//  2. jiti, as Pi itself loads extensions: for an installed package (`npm i -g <tarball>`, `npx -p
//     <tarball> pi-context-keeper`), where bun is absent but Pi (a peer dependency npm installs,
//     which brings jiti) is; needs Node >= 22.19, as Pi does.
// Usage: pi-context-keeper report [session.jsonl ...] [--json] [--out DIR] [--arms a,b] [--no-chart]
//        [--summaries MODE] [--strict];  pi-context-keeper report --all [--since 30d] [--json];
//        pi-context-keeper --version | --help
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "src", "report", "cli", "main.ts");
const local = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
const bun = existsSync(local) ? local : process.versions.bun ? process.execPath : undefined;

if (bun) {
  const child = spawn(bun, [entry, ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill("SIGKILL"));
  child.on("error", (error) => {
    console.error(`pi-context-keeper: cannot start bun: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
} else {
  const [major, minor] = process.versions.node.split(".").map(Number);
  let createJiti;
  try {
    const pi = fileURLToPath(import.meta.resolve("@earendil-works/pi-coding-agent"));
    ({ createJiti } = createRequire(pi)("jiti"));
  } catch {
    createJiti = undefined;
  }
  const oldNode = major < 22 || (major === 22 && minor < 19);
  if (!createJiti || oldNode) {
    const why = oldNode
      ? `the report needs Node >= 22.19, as Pi does (this is Node ${process.versions.node}): run it with that Node on PATH`
      : "Pi (@earendil-works/pi-coding-agent), which brings the TypeScript loader, is not installed beside it: " +
        "`npm i -g <package or tarball>` installs it as a peer dependency";
    console.error(`pi-context-keeper: cannot run the report here: ${why}. In a clone, \`npm install\` brings bun and runs it directly.`);
    process.exit(1);
  }
  // main.ts reads process.argv.slice(2), as under bun.
  process.argv = [process.argv[0], entry, ...process.argv.slice(2)];
  await createJiti(import.meta.url, { tryNative: true }).import(entry);
}
