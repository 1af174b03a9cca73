/**
 * Edge: side files for huge originals, beside the session file
 * (`<session>.jsonl.keeper/<sha256>.txt`). Written once; the content is its own name.
 */
import { existsSync, mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export function spillPathFor(sessionFile: string, sha256: string): string {
  return join(`${sessionFile}.keeper`, `${sha256}.txt`);
}

export async function writeSpillFile(path: string, text: string): Promise<void> {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  await writeFile(path, text, "utf8");
}

export function readSpillFile(path: string): Promise<string> {
  return readFile(path, "utf8");
}
