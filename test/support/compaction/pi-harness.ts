/**
 * Runs Pi in-process over a given SessionManager and captures the `preparation` Pi hands
 * to `session_before_compact` (the hook cancels, so no model call is made).
 */
import type { SessionBeforeCompactEvent, SessionManager } from "@earendil-works/pi-coding-agent";
import { inProcessPi } from "../host/in-process-pi.ts";

export type PiPreparation = SessionBeforeCompactEvent["preparation"];

export async function capturePiPreparation(
  sessionManager: SessionManager,
  compaction: { reserveTokens?: number; keepRecentTokens?: number } = {},
): Promise<PiPreparation | undefined> {
  let captured: PiPreparation | undefined;
  const { session } = await inProcessPi({
    factories: [
      (pi) => {
        pi.on("session_before_compact", (event) => {
          captured = event.preparation;
          return { cancel: true };
        });
      },
    ],
    sessionManager,
    settings: { compaction: { enabled: true, ...compaction } },
    model: { id: "faux-parity", contextWindow: 200_000 },
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
