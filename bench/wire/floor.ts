/**
 * The cost floor of a run under the "no rewrite inside a tool loop" rule (pure).
 *
 * An arm that never touches a tool loop pays, in each loop, for writing the loop's new tokens
 * once and reading the loop back on every later step; all it can shrink is what it carries into
 * each prompt (the history before it). The floor is the run's own cost with that carried history
 * taken out entirely: every prompt after the first starts from the system prompt, the tools and
 * the new prompt alone, as if nothing earlier were kept. So no policy that only rewrites at prompt
 * starts can go below it (the same script, the same tools).
 *
 * Carried history at a prompt start = its request's input − the first request's input (system,
 * tools, first prompt): prompts of one size are assumed; a longer later prompt counts as history,
 * which only lowers the floor. The carried tokens leave that request's writes first (the dearest),
 * then its uncached input, then its reads; every later request of the loop reads them no more.
 * Side (summary) requests stay as they were.
 */
import { isHumanTurn } from "../../test/support/fake-anthropic/validate.ts";
import type { RecordedRequest } from "../../test/support/fake-anthropic/types.ts";
import { ANTHROPIC_WEIGHTS, type BenchWeights } from "./weights.ts";

type Usage = { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };

const totalInput = (u: Usage) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/** What taking `carried` tokens out of one prompt-start request saves: writes first, then uncached, then reads. */
function promptStartSaving(u: Usage, carried: number, w: BenchWeights): number {
  const fromWrite = Math.min(carried, u.cache_creation_input_tokens);
  const fromInput = Math.min(carried - fromWrite, u.input_tokens);
  const fromRead = Math.min(carried - fromWrite - fromInput, u.cache_read_input_tokens);
  return w.write * fromWrite + fromInput + w.read * fromRead;
}

/** How much of `cost` (the run's measured cost) is carried history; `cost − saving` is the floor. */
export function carriedHistoryCost(requests: readonly RecordedRequest[], weights: BenchWeights = ANTHROPIC_WEIGHTS): number {
  const main = requests.filter((r) => r.kind === "main" && r.status === 200 && r.response !== undefined);
  if (main.length === 0) return 0;
  const firstInput = totalInput(main[0]!.response!.usage);
  let carried = 0;
  let saving = 0;
  for (const [i, r] of main.entries()) {
    const u = r.response!.usage;
    const messages = r.body.messages;
    const promptStart = i > 0 && messages.length > 0 && isHumanTurn(messages[messages.length - 1]!);
    if (promptStart) {
      carried = Math.max(0, totalInput(u) - firstInput);
      saving += promptStartSaving(u, carried, weights);
    } else {
      saving += weights.read * Math.min(carried, u.cache_read_input_tokens);
    }
  }
  return saving;
}
