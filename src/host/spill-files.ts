/**
 * Edge: side files for huge originals, beside the session file
 * (`<session>.jsonl.keeper/<sha256>.txt`). Written once; the content is its own name.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export function spillPathFor(sessionFile: string, sha256: string): string {
  return join(`${sessionFile}.keeper`, `${sha256}.txt`);
}

/**
 * Writes to a temporary name, then renames: a full disk or a crash never leaves a partial
 * file under the final name (which `existsSync` would then take as written). Rejects with the
 * cause; `writeSpills` turns that into a reported failure.
 */
export async function writeSpillFile(path: string, text: string): Promise<void> {
  if (existsSync(path)) return;
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, "utf8");
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

export function readSpillFile(path: string): Promise<string> {
  return readFile(path, "utf8");
}
