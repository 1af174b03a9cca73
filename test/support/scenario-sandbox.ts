/**
 * The generated project sandbox: plausible source, log, CSV and Markdown files of chosen sizes,
 * written into Pi's cwd so Pi's real `read` / `bash` tools produce real outputs.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Prng } from "./scenario-prng.ts";

/** Relative path → file content. */
export type SandboxFiles = Record<string, string>;

export const SANDBOX_WORDS = [
  "cache", "session", "render", "budget", "prune", "token", "window", "summary", "request", "batch",
  "cursor", "offset", "buffer", "stream", "parser", "anchor", "marker", "ledger", "policy", "report",
] as const;

type FileKind = "ts" | "log" | "csv" | "md";

function line(kind: FileKind, prng: Prng, n: number): string {
  const w = () => prng.pick(SANDBOX_WORDS);
  switch (kind) {
    case "ts":
      return prng.chance(0.2)
        ? `export function ${w()}${n}(${w()}: number, ${w()}: string): number {`
        : `  const ${w()}_${n} = ${w()}(${prng.int(0, 999)}) + ${w()}.length; // ${w()} ${w()}`;
    case "log": {
      const level = prng.pick(["INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"]);
      return `2026-03-${String(prng.int(1, 28)).padStart(2, "0")}T10:${String(n % 60).padStart(2, "0")}:00Z ${level} ${w()}.${w()} id=${prng.int(1000, 9999)} took=${prng.int(1, 900)}ms`;
    }
    case "csv":
      return `${n},${w()},${w()},${prng.int(0, 100000)},${(prng.next() * 100).toFixed(3)}`;
    case "md":
      return prng.chance(0.1) ? `## ${w()} ${w()} ${n}` : `The ${w()} keeps the ${w()} near the ${w()}; see step ${n} for the ${w()}.`;
  }
}

function fileOf(kind: FileKind, prng: Prng, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  if (kind === "csv") lines.push("id,name,kind,count,ratio");
  for (let n = 1; size < bytes; n++) {
    const l = line(kind, prng, n);
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join("\n") + "\n";
}

const DIRS: Record<FileKind, string> = { ts: "src", log: "logs", csv: "data", md: "docs" };

/** `count` files whose sizes are drawn uniformly from [minBytes, maxBytes]. */
export function generateSandbox(opts: { prng: Prng; count: number; minBytes: number; maxBytes: number }): SandboxFiles {
  const files: SandboxFiles = {};
  const kinds: FileKind[] = ["ts", "log", "csv", "md"];
  for (let i = 0; i < opts.count; i++) {
    const kind = kinds[i % kinds.length];
    const name = `${DIRS[kind]}/${opts.prng.pick(SANDBOX_WORDS)}-${i}.${kind}`;
    files[name] = fileOf(kind, opts.prng, opts.prng.int(opts.minBytes, opts.maxBytes));
  }
  files["README.md"] = "# Sandbox project\n\nGenerated files for pi-context-keeper wire tests.\n";
  return files;
}

export function writeSandbox(dir: string, files: SandboxFiles): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}
