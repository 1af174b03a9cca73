/**
 * Honest-ish savings: how many characters the rendered history loses between the state
 * before a flush and after it, over the same messages, divided by 4 (Pi's own
 * `estimateTokens` ratio). The branch is rendered as if a new prompt had just arrived
 * (a closing user message appended), so the just-finished loop counts as history — as
 * it will on every later request. The thinking strip is not included.
 *
 * This is the estimate of a flush without cache discipline. Under the gate the same quantity
 * is measured from the gate's own two renders instead (`savedByApplied` in
 * `src/engine/decide.ts`), so a flush never renders more than twice.
 */
import type { ContextMessage, UserMessage } from "../session/messages.ts";
import type { PruneConfig } from "../prune/config.ts";
import { renderContext } from "../prune/pipeline.ts";
import type { KeeperState } from "../state/schema.ts";

export interface SavingsInput {
  messages: readonly ContextMessage[];
  before: KeeperState;
  after: KeeperState;
  config: PruneConfig;
  /** The render to measure with (default `renderContext`); injected to count renders. */
  render?: (input: { messages: ContextMessage[]; state: KeeperState; config: PruneConfig }) => ContextMessage[];
}

export function renderedChars(messages: readonly ContextMessage[], state: KeeperState, config: PruneConfig, render: NonNullable<SavingsInput["render"]> = renderContext): number {
  const probe: UserMessage = { role: "user", content: "", timestamp: Number.MAX_SAFE_INTEGER };
  const rendered = render({ messages: [...messages, probe], state, config });
  return JSON.stringify(rendered).length;
}

export function estimateTokensSaved(input: SavingsInput): number {
  const saved = renderedChars(input.messages, input.before, input.config, input.render) - renderedChars(input.messages, input.after, input.config, input.render);
  return Math.max(0, Math.round(saved / 4));
}
