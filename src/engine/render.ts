/**
 * The `context` handler's whole decision, as one pure function of (messages, persisted
 * state, settings, model). No clock, no I/O. Returns the very array it was given when
 * nothing is due. A caller that needs to know what each message the thinking strip produced was
 * before it (a flush's savings estimate, decide.ts) hands in its own `strippedFrom` map, which
 * the render fills; it changes no output.
 */
import { renderContext, type ThinkingStripPhase } from "../prune/pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { boundaryForRender, stripOldThinking } from "../thinking/index.ts";
import { pruneConfigFrom, thinkingPolicyFor, type ModelIdentityInput } from "./config.ts";

export interface KeeperRenderInput {
  messages: ContextMessage[];
  state: KeeperState;
  settings: KeeperSettings;
  model: ModelIdentityInput | undefined;
  /** Filled with each message the thinking strip produced → the message it stripped (what the render without the strip holds there). */
  strippedFrom?: StrippedFrom;
}

/** A render's record of what the thinking strip replaced, owned by the caller that asked for it. */
export type StrippedFrom = Map<ContextMessage, ContextMessage>;

export function thinkingPhaseFor(settings: KeeperSettings, model: ModelIdentityInput | undefined, strippedFrom?: StrippedFrom): ThinkingStripPhase | undefined {
  if (!thinkingPolicyFor(settings, model).strip) return undefined;
  const config = { enabled: true, keepLastTurns: settings.thinkingStrip.keepLastTurns };
  return (messages, t) => {
    const out = stripOldThinking(messages, config, boundaryForRender({ persisted: t.boundaryTimestamp, hasFlushed: t.hasFlushed }));
    if (strippedFrom && out !== messages) for (let i = 0; i < out.length; i++) if (out[i] !== messages[i]) strippedFrom.set(out[i]!, messages[i]!);
    return out;
  };
}

export function keeperRender(input: KeeperRenderInput): ContextMessage[] {
  const { messages, state, settings, model } = input;
  if (!settings.enabled) return messages;
  return renderContext({
    messages,
    state,
    config: pruneConfigFrom(settings),
    phases: { thinkingStrip: thinkingPhaseFor(settings, model, input.strippedFrom) },
  });
}
