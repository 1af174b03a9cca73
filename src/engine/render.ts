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
  /** Where a part that threw is recorded (the render went on without it). */
  faults?: PartFault[];
}

/** A part of the render that threw: the render went on without it (`step` reports it once). */
export interface PartFault {
  part: "pruning" | "thinking";
  error: string;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A render's record of what the thinking strip replaced, owned by the caller that asked for it. */
export type StrippedFrom = Map<ContextMessage, ContextMessage>;

/** The thinking strip as a render phase; a throw leaves the messages unstripped (recorded in `faults`). */
export function thinkingPhaseFor(settings: KeeperSettings, model: ModelIdentityInput | undefined, strippedFrom?: StrippedFrom, faults?: PartFault[]): ThinkingStripPhase | undefined {
  if (!thinkingPolicyFor(settings, model).strip) return undefined;
  const config = { enabled: true, keepLastTurns: settings.thinkingStrip.keepLastTurns };
  return (messages, t) => {
    let out: ContextMessage[];
    try {
      out = stripOldThinking(messages, config, boundaryForRender({ persisted: t.boundaryTimestamp, hasFlushed: t.hasFlushed }));
    } catch (error) {
      faults?.push({ part: "thinking", error: messageOf(error) });
      return messages;
    }
    if (strippedFrom && out !== messages) for (let i = 0; i < out.length; i++) if (out[i] !== messages[i]) strippedFrom.set(out[i]!, messages[i]!);
    return out;
  };
}

/**
 * The render. Each part isolated: a throw in the thinking strip leaves the messages unstripped;
 * a throw in a pruning phase renders with the thinking strip alone (it keeps every message's
 * pairing); either is recorded in `faults`.
 */
export function keeperRender(input: KeeperRenderInput): ContextMessage[] {
  const { messages, state, settings, model } = input;
  if (!settings.enabled) return messages;
  const config = pruneConfigFrom(settings);
  const phases = { thinkingStrip: thinkingPhaseFor(settings, model, input.strippedFrom, input.faults) };
  try {
    return renderContext({ messages, state, config, phases });
  } catch (error) {
    input.faults?.push({ part: "pruning", error: messageOf(error) });
  }
  try {
    return renderContext({ messages, state, config: { ...config, enabled: false }, phases });
  } catch {
    return messages;
  }
}
