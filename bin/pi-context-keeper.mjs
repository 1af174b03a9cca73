#!/usr/bin/env node
// pi-context-keeper CLI. The code is TypeScript, which Node cannot run, so this re-runs the
// TypeScript entry under the `bun` binary installed in this clone's node_modules (a dev
// dependency; `npm install` puts it there). Arguments, stdio and the exit code pass through.
// Usage: pi-context-keeper report [session.jsonl ...] [--json] [--out DIR] [--arms a,b] [--no-chart]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "src", "report", "cli", "main.ts");
const local = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
const bun = existsSync(local) ? local : process.versions.bun ? process.execPath : undefined;
if (!bun) {
  console.error("pi-context-keeper: run `npm install` in this clone first (the CLI runs under the bun dev dependency).");
  process.exit(1);
}
const result = spawnSync(bun, [entry, ...process.argv.slice(2)], { stdio: "inherit" });
if (result.error) {
  console.error(`pi-context-keeper: cannot start bun: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
