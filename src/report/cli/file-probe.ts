/** The real `FileProbe`: can this path be opened for reading, and is it a regular file? */
import { closeSync, fstatSync, openSync } from "node:fs";
import type { ProbeResult } from "./input-check.ts";

export function probeFileSystem(path: string): ProbeResult {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    return fstatSync(fd).isFile() ? { ok: true } : { ok: false, code: "NOT_A_FILE" };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, code: typeof code === "string" ? code : "UNKNOWN" };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
