/**
 * Tolerant parsing of a Pi session JSONL text: every good line becomes an entry, every bad
 * one a diagnostic naming the file and line. Never throws for a bad line.
 */
export interface SessionDiagnostic {
  file: string;
  /** 1-based line number; 0 for whole-file findings. */
  line: number;
  message: string;
}

/** Entry types Pi 1.6 writes (see Pi's docs/session-format.md). */
export const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set([
  "session",
  "message",
  "thinking_level_change",
  "model_change",
  "usage",
  "compaction",
  "branch_summary",
  "custom",
  "custom_message",
  "context_edit",
  "label",
  "session_info",
]);

export interface ParsedSessionText {
  /** Raw JSON objects in file order (header included); unknown types are kept (Pi ignores them). */
  entries: Array<Record<string, unknown>>;
  /** entries[i] came from line lineOf[i] (1-based). */
  lineOf: number[];
  diagnostics: SessionDiagnostic[];
}

const MAX_LINE_DIAGNOSTICS = 20;

export function parseSessionText(text: string, file: string): ParsedSessionText {
  const entries: Array<Record<string, unknown>> = [];
  const lineOf: number[] = [];
  const diagnostics: SessionDiagnostic[] = [];
  let badLines = 0;
  const lines = text.split("\n");
  const report = (line: number, message: string) => {
    badLines++;
    if (badLines <= MAX_LINE_DIAGNOSTICS) diagnostics.push({ file, line, message });
  };
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      const last = lines.slice(i + 1).every((l) => !l.trim());
      report(line, last ? "not valid JSON (truncated last line?); skipped" : "not valid JSON; skipped");
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      report(line, "not a JSON object; skipped");
      return;
    }
    const type = (value as { type?: unknown }).type;
    if (typeof type !== "string") {
      report(line, "entry has no string `type`; skipped");
      return;
    }
    if (!KNOWN_ENTRY_TYPES.has(type)) diagnostics.push({ file, line, message: `unknown entry type "${type}"; kept, contributes nothing to context` });
    if (type === "message" && typeof (value as { message?: unknown }).message !== "object") {
      report(line, "message entry without a `message` object; skipped");
      return;
    }
    entries.push(value as Record<string, unknown>);
    lineOf.push(line);
  });
  if (badLines > MAX_LINE_DIAGNOSTICS) diagnostics.push({ file, line: 0, message: `${badLines - MAX_LINE_DIAGNOSTICS} more bad lines not listed` });
  if (entries.length === 0) diagnostics.push({ file, line: 0, message: "no session entries found: not a Pi session JSONL file?" });
  else if (entries[0].type !== "session") diagnostics.push({ file, line: lineOf[0], message: "first entry is not a session header; read as a version-1 session" });
  return { entries, lineOf, diagnostics };
}
