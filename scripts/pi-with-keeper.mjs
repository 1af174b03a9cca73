#!/usr/bin/env node
// Runs the Pi CLI bundled in this clone's node_modules with this extension loaded, under the
// Node >= 22.19 that scripts/pi-runtime.mjs finds (the Node 22 of `npm run setup:pi-node`, or
// PI_KEEPER_NODE, or `node` on PATH), else under the `bun` dev dependency with a notice.
// Usage: npm run pi -- [pi arguments...]      e.g. npm run pi -- -p "hello"
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findPiRuntime } from "./pi-runtime.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
const runtime = findPiRuntime({ root });
if (runtime.kind === "none" || !existsSync(cli)) {
  console.error(`pi-context-keeper: ${runtime.kind === "none" ? runtime.notice : "run `npm install` in this clone first (pi is a dev dependency)"}.`);
  process.exit(1);
}
if (runtime.notice) console.error(`pi-context-keeper: ${runtime.notice}.`);
const result = spawnSync(runtime.command, [cli, "-e", root, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
