/** Ring buffer of recent gate decisions, for `/keeper why`. A reducer: (log, entry) => log. */
import { appendToRing } from "./ring.ts";
import type { GateDecisionLog, GateLogEntry } from "./schema.ts";

export const DEFAULT_GATE_LOG_CAPACITY = 16;

export function emptyGateDecisionLog(capacity = DEFAULT_GATE_LOG_CAPACITY): GateDecisionLog {
  return { capacity: Math.max(1, Math.floor(capacity)), entries: [] };
}

export function appendGateDecision(log: GateDecisionLog, entry: GateLogEntry): GateDecisionLog {
  return { capacity: log.capacity, entries: appendToRing(log.entries, entry, log.capacity) };
}

/** The last `count` entries, newest first. */
export function latestGateDecisions(log: GateDecisionLog, count = log.capacity): GateLogEntry[] {
  return log.entries.slice(Math.max(0, log.entries.length - count)).reverse();
}
