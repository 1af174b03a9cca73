/**
 * Error-purge decisions, made at a flush: a failed call's arguments are purged once at
 * least `cooldownTurns` assistant messages follow its own assistant message in the
 * branch. Counting happens here, over the raw branch, so a render never depends on a
 * live count.
 *
 * A call whose arguments are only its command (plus numbers or flags such as a timeout) is
 * never purged: there is nothing large to remove — the purge marker would be longer than
 * most commands — and the command is the record of what failed.
 */
import { type ContextMessage, isAssistant, isToolResult } from "../session/messages.ts";
import type { PruneConfig } from "../prune/config.ts";
import type { Pairing } from "../prune/occurrence.ts";
import type { ProtectionMatcher } from "../prune/protection.ts";
import { isCommandKey } from "../summarize/output-facts.ts";

export interface ErrorPurgeInput {
  messages: readonly ContextMessage[];
  pairing: Pairing;
  alreadyPurged: ReadonlySet<string>;
  config: PruneConfig;
  protection: ProtectionMatcher;
}

/** Arguments with nothing to purge: command strings and non-string scalars only. */
function onlyCommand(args: Record<string, unknown>): boolean {
  const entries = Object.entries(args ?? {});
  return entries.some(([k]) => isCommandKey(k)) && entries.every(([k, v]) => isCommandKey(k) || (v !== null && typeof v !== "object" && typeof v !== "string"));
}

export function proposeErrorPurges(input: ErrorPurgeInput): string[] {
  const { messages, pairing, config } = input;
  if (!config.errorPurge.enabled) return [];
  // assistantsFrom[i] = number of assistant messages at index >= i.
  const assistantsFrom = new Array<number>(messages.length + 1).fill(0);
  for (let i = messages.length - 1; i >= 0; i--) assistantsFrom[i] = assistantsFrom[i + 1] + (isAssistant(messages[i]) ? 1 : 0);
  const cooldown = Math.max(0, config.errorPurge.cooldownTurns);

  const out: string[] = [];
  for (const c of pairing.calls) {
    if (c.resultIndex === undefined || input.alreadyPurged.has(c.key)) continue;
    const result = messages[c.resultIndex];
    if (!isToolResult(result) || !result.isError) continue;
    if (input.protection.isProtected(c.toolName, c.arguments)) continue;
    if (onlyCommand(c.arguments)) continue;
    const after = assistantsFrom[c.assistantIndex + 1];
    if (after >= cooldown) out.push(c.key);
  }
  return out;
}
