#!/usr/bin/env node
// Runs the Pi CLI bundled in this clone's node_modules (through the `bun` npm package,
// since Pi needs a newer Node than many machines have) with this extension loaded.
// Usage: npm run pi -- [pi arguments...]      e.g. npm run pi -- -p "hello"
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
const cli = join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
if (!existsSync(bun) || !existsSync(cli)) {
  console.error("pi-context-keeper: run `npm install` in this clone first (bun and pi are dev dependencies).");
  process.exit(1);
}
const result = spawnSync(bun, [cli, "-e", root, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
