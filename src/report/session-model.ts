/**
 * What a session's entries say before any replay: its most used model (and how that model
 * bills thinking of closed cycles), and whether its file format is older than Pi's current one.
 */
import { findThinkingPolicyRow } from "../thinking/index.ts";
import type { SessionDiagnostic } from "./session-file.ts";

/**
 * The most used model of the recording and whether closed-cycle thinking costs nothing:
 * Anthropic by the model's thinking policy row; OpenAI and Google do not re-send earlier
 * turns' reasoning, so it is dropped there too.
 */
export function sessionModel(entries: ReadonlyArray<Record<string, unknown>>): { model: string; provider: string; api: string; closedCycleThinking: "dropped" | "billed"; assistants: number } {
  const counts = new Map<string, { n: number; provider: string; api: string }>();
  let assistants = 0;
  for (const e of entries) {
    const m = e.message as { role?: string; api?: string; provider?: string; model?: string } | undefined;
    if (e.type !== "message" || m?.role !== "assistant") continue;
    assistants++;
    if (!m.model) continue;
    const c = counts.get(m.model) ?? { n: 0, provider: m.provider ?? "", api: m.api ?? "" };
    c.n++;
    counts.set(m.model, c);
  }
  const top = [...counts.entries()].sort((a, b) => b[1].n - a[1].n)[0];
  if (!top) return { model: "", provider: "", api: "", closedCycleThinking: "dropped", assistants };
  const ref = { model: top[0], provider: top[1].provider, api: top[1].api };
  if (top[1].api !== "anthropic-messages") return { ...ref, closedCycleThinking: "dropped", assistants };
  const row = findThinkingPolicyRow({ provider: top[1].provider, modelId: top[0], api: top[1].api });
  return { ...ref, closedCycleThinking: row?.behaviour === "drops-closed-cycle" ? "dropped" : "billed", assistants };
}

/** Pi's current session format version (docs/session-format.md). */
export const CURRENT_SESSION_VERSION = 3;

/** A note when the header declares an older format (Pi migrates it; the replay does the same). */
export function oldVersionDiagnostic(entries: ReadonlyArray<Record<string, unknown>>, lineOf: readonly number[], file: string): SessionDiagnostic | undefined {
  const header = entries[0];
  if (!header || header.type !== "session") return undefined;
  const version = typeof header.version === "number" ? header.version : 1;
  if (version >= CURRENT_SESSION_VERSION) return undefined;
  return { file, line: lineOf[0], message: `session format version ${version} (current is ${CURRENT_SESSION_VERSION}): migrated with Pi's own rules before the replay` };
}

