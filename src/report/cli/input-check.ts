/**
 * Session files that cannot be read, found before anything is replayed, so the user gets one
 * plain line per file instead of a table of zeros. The probe (the file system) comes in as a
 * function; `probeFileSystem` in `file-probe.ts` is the real one.
 */

/** What a probe found wrong with a path: a Node error code (ENOENT, EACCES, …) or NOT_A_FILE. */
export type ProbeResult = { ok: true } | { ok: false; code: string };
export type FileProbe = (path: string) => ProbeResult;

const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory, not a session file",
  NOT_A_FILE: "it is a directory or special file, not a session file",
  ENAMETOOLONG: "the path is too long",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links in the path",
};

export function readErrorReason(code: string): string {
  return REASONS[code] ?? `cannot be read (${code})`;
}

/** One line per unreadable file, in argument order ("cannot read FILE: no such file"). */
export function unreadableInputs(files: readonly string[], probe: FileProbe): string[] {
  const lines: string[] = [];
  for (const file of files) {
    const r = probe(file);
    if (!r.ok) lines.push(`cannot read ${file}: ${readErrorReason(r.code)}`);
  }
  return lines;
}
