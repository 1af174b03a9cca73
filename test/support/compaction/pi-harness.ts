/**
 * Runs Pi in-process over a given SessionManager and captures the `preparation` Pi hands
 * to `session_before_compact` (the hook cancels, so no model call is made).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxProvider } from "@earendil-works/pi-ai";
import {
  createAgentSession,
  DefaultResourceLoader,
  type SessionBeforeCompactEvent,
  SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";

export type PiPreparation = SessionBeforeCompactEvent["preparation"];

export async function capturePiPreparation(
  sessionManager: SessionManager,
  compaction: { reserveTokens?: number; keepRecentTokens?: number } = {},
): Promise<PiPreparation | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "ck-compaction-"));
  const faux = fauxProvider({ models: [{ id: "faux-parity", contextWindow: 200_000 }] });
  let captured: PiPreparation | undefined;
  const resourceLoader = new DefaultResourceLoader({
    cwd: dir,
    agentDir: dir,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    extensionFactories: [
      (pi) => {
        pi.on("session_before_compact", (event) => {
          captured = event.preparation;
          return { cancel: true };
        });
      },
    ],
  });
  await resourceLoader.reload();
  const { session } = await createAgentSession({
    cwd: dir,
    agentDir: dir,
    model: faux.getModel(),
    sessionManager,
    resourceLoader,
    settingsManager: SettingsManager.inMemory({ compaction: { enabled: true, ...compaction } }),
  });
  try {
    await session.compact();
  } catch {
    // "Compaction cancelled" (our hook) or "Nothing to compact": both expected.
  } finally {
    session.dispose();
  }
  return captured;
}

/** Set-free view of a preparation so equality failures print readably. */
export function comparable(p: PiPreparation | undefined) {
  if (!p) return undefined;
  return {
    ...p,
    fileOps: { read: [...p.fileOps.read].sort(), written: [...p.fileOps.written].sort(), edited: [...p.fileOps.edited].sort() },
  };
}
