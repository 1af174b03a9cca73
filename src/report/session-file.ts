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

/**
 * The complete JSON values a line holds one after the other ("{…}{…}": a writer that lost a
 * line break), and what is left after the last complete one. A string's braces and escapes
 * are skipped; only objects and arrays at the top level are split.
 */
export function splitJsonValues(line: string): { values: string[]; rest: string } {
  const values: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0 && start >= 0) {
        values.push(line.slice(start, i + 1));
        start = -1;
      }
      if (depth < 0) break;
    } else if (depth === 0 && !/\s/.test(ch)) break;
  }
  const consumed = values.reduce((n, v) => line.indexOf(v, n) + v.length, 0);
  return { values, rest: line.slice(consumed).trim() };
}

/**
 * A line that starts with a truncated record (a writer stopped mid-line) and goes on with
 * complete ones (the next writer appended to the same line): the complete records from the
 * first `{"type":` after which the rest of the line splits into whole JSON values that are all
 * Pi entries (a known `type` and an `id`; Pi writes every entry with `type` first), so that an
 * object nested in the truncated record is never taken for one. Undefined when there is none.
 */
export function recordsAfterTruncation(line: string): unknown[] | undefined {
  for (let at = line.indexOf('{"type":', 1); at > 0; at = line.indexOf('{"type":', at + 1)) {
    const parts = splitJsonValues(line.slice(at));
    if (parts.values.length === 0 || parts.rest !== "") continue;
    let values: unknown[];
    try {
      values = parts.values.map((v) => JSON.parse(v) as unknown);
    } catch {
      continue;
    }
    // Whole entries only: a value nested in the truncated record (a content block) is not one.
    const isEntry = (v: unknown) => {
      const e = v as { type?: unknown; id?: unknown } | null;
      return typeof e?.type === "string" && KNOWN_ENTRY_TYPES.has(e.type) && typeof e.id === "string";
    };
    if (values.every(isEntry)) return values;
  }
  return undefined;
}

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
  const accept = (value: unknown, line: number) => {
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
  };
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    try {
      accept(JSON.parse(raw), line);
      return;
    } catch {
      // Not one JSON value: several glued together, or a truncated one.
    }
    const last = lines.slice(i + 1).every((l) => !l.trim());
    const truncated = last ? " (truncated last line?)" : "";
    const parts = splitJsonValues(raw);
    const parsed: unknown[] = [];
    for (const v of parts.values) {
      try {
        parsed.push(JSON.parse(v));
      } catch {
        break;
      }
    }
    if (parsed.length === 0) {
      const after = recordsAfterTruncation(raw);
      if (!after) {
        report(line, `not valid JSON${truncated}; skipped`);
        return;
      }
      for (const value of after) accept(value, line);
      diagnostics.push({ file, line, message: `a truncated record followed by ${after.length} complete one${after.length === 1 ? "" : "s"} on one line: the truncated part skipped, the rest read` });
      return;
    }
    if (parsed.length === 1 && parts.rest === "") {
      report(line, `not valid JSON${truncated}; skipped`);
      return;
    }
    for (const value of parsed) accept(value, line);
    const complete = parsed.length === parts.values.length && parts.rest === "";
    diagnostics.push({
      file,
      line,
      message: complete
        ? `${parsed.length} JSON records on one line (a missing line break); all read`
        : `${parsed.length} complete JSON record${parsed.length === 1 ? "" : "s"} read; the rest of the line is not valid JSON${truncated}, skipped`,
    });
  });
  if (badLines > MAX_LINE_DIAGNOSTICS) diagnostics.push({ file, line: 0, message: `${badLines - MAX_LINE_DIAGNOSTICS} more bad lines not listed` });
  if (entries.length === 0) diagnostics.push({ file, line: 0, message: "no session entries found: not a Pi session JSONL file?" });
  else if (entries[0].type !== "session") diagnostics.push({ file, line: lineOf[0], message: "first entry is not a session header; read as a version-1 session" });
  return { entries, lineOf, diagnostics };
}
