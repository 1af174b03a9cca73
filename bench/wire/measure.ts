/**
 * What one benchmark run cost, read from the requests the fake server recorded (pure).
 *
 * - Cost is billed-equivalent input tokens (uncached input = 1): uncached + write × cache write
 *   + read × cache read over every answered request, main and side, plus each side request's
 *   output at `output` (the provider's weights, weights.ts: Anthropic 1.25 · 0.1 · 5). The main
 *   loop's output is left out: the script makes it the same in every arm.
 * - A bust is a main request that reads back less than the previous main request cached
 *   (read + write), by more than the cache's counting step (`bustSlack`): part of the history
 *   it had sent was rewritten. It is "at a prompt start" when the request's last message is a
 *   human turn, else "in a tool loop". What a bust in a loop re-wrote is what it wrote less what
 *   was new in it (the messages after the previous request's: the answer and its results, at
 *   the fake servers' JSON / 4 per block) — the tokens a stub removed are not re-written, they are
 *   gone — and it costs (write − read) each beyond reading them (`loopRewriteCost`).
 * - Final context is the last main request's input tokens (uncached + read + write).
 * - Summary calls are answered side requests; refused requests are any non-200 answer.
 * - Carried-history cost is the part of the cost spent on the history carried into each prompt;
 *   cost minus it is the floor of any arm that leaves tool loops untouched (`floor.ts`).
 */
import { isHumanTurn } from "../../test/support/fake-anthropic/validate.ts";
import type { RecordedRequest, WireBlock, WireMessage } from "../../test/support/fake-anthropic/types.ts";
import { carriedHistoryCost } from "./floor.ts";
import { ANTHROPIC_WEIGHTS, OUTPUT_WEIGHT, READ_WEIGHT, WRITE_WEIGHT, type BenchWeights } from "./weights.ts";

export { OUTPUT_WEIGHT, READ_WEIGHT, WRITE_WEIGHT };

export interface ContextMix {
  toolResultChars: number;
  thinkingChars: number;
  /** Text blocks of user messages (prompts, collapsed chains, injected summaries). */
  userTextChars: number;
  assistantTextChars: number;
  toolCallChars: number;
}

export interface RunMeasure {
  mainRequests: number;
  summaryCalls: number;
  refused: number;
  /** Billed-equivalent input tokens (see the module comment). */
  cost: number;
  /** The part of `cost` spent on side (summary) requests. */
  sideCost: number;
  /** The part of `cost` spent on the history carried into each prompt (`floor.ts`). */
  carriedHistoryCost: number;
  bustsInLoop: number;
  bustsAtPromptStart: number;
  /** Most busts inside one user prompt (its start and its tool loop). */
  maxBustsPerPrompt: number;
  /** Tokens the busts wrote again (what the previous request had cached but this one did not read). */
  bustTokens: number;
  /** Of those, the tokens busts inside tool loops no longer read (re-written, or removed by a stub). */
  bustTokensInLoop: number;
  /** Tokens the busts inside tool loops wrote again (written less what was new in the request). */
  loopRewriteTokens: number;
  /** What that cost beyond reading them: loopRewriteTokens × (write − read). */
  loopRewriteCost: number;
  finalContextTokens: number;
  finalMix: ContextMix;
  prompts: number;
}

function answered(r: RecordedRequest): r is RecordedRequest & { response: NonNullable<RecordedRequest["response"]> } {
  return r.status === 200 && r.response !== undefined;
}

function inputCost(u: { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number }, w: BenchWeights): number {
  return u.input_tokens + w.write * u.cache_creation_input_tokens + w.read * u.cache_read_input_tokens;
}

const blocksOf = (m: WireMessage): WireBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

function resultChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  return (content as WireBlock[]).reduce((n, b) => n + (typeof b.text === "string" ? b.text.length : 0), 0);
}

export function contextMix(messages: readonly WireMessage[]): ContextMix {
  const mix: ContextMix = { toolResultChars: 0, thinkingChars: 0, userTextChars: 0, assistantTextChars: 0, toolCallChars: 0 };
  for (const m of messages) {
    for (const b of blocksOf(m)) {
      if (b.type === "tool_result") mix.toolResultChars += resultChars(b.content);
      else if (b.type === "thinking") mix.thinkingChars += String(b.thinking ?? "").length;
      else if (b.type === "tool_use") mix.toolCallChars += JSON.stringify(b.input ?? {}).length;
      else if (b.type === "text" && m.role === "user") mix.userTextChars += String(b.text ?? "").length;
      else if (b.type === "text") mix.assistantTextChars += String(b.text ?? "").length;
    }
  }
  return mix;
}

/** Tokens of the messages after the first `from` (the fake servers' count: each block's JSON / 4). */
function newTokens(messages: readonly WireMessage[], from: number): number {
  let n = 0;
  for (const m of messages.slice(from)) for (const b of blocksOf(m)) n += Math.ceil(JSON.stringify(b).length / 4);
  return n;
}

export function measureRun(requests: readonly RecordedRequest[], weights: BenchWeights = ANTHROPIC_WEIGHTS): RunMeasure {
  let cost = 0;
  let sideCost = 0;
  let summaryCalls = 0;
  let refused = 0;
  for (const r of requests) {
    if (r.status !== 200) refused++;
    if (!answered(r)) continue;
    const c = inputCost(r.response.usage, weights);
    cost += c;
    if (r.kind === "side") {
      const s = c + weights.output * r.response.usage.output_tokens;
      sideCost += s;
      cost += s - c;
      summaryCalls++;
    }
  }

  const main = requests.filter((r) => r.kind === "main" && answered(r));
  let bustsInLoop = 0;
  let bustsAtPromptStart = 0;
  let bustTokens = 0;
  let bustTokensInLoop = 0;
  let loopRewriteTokens = 0;
  let prevMessages = 0;
  let prompts = 0;
  let bustsThisPrompt = 0;
  let maxBustsPerPrompt = 0;
  let prevCached = 0;
  for (const r of main) {
    const u = r.response!.usage;
    const messages = r.body.messages;
    const promptStart = messages.length > 0 && isHumanTurn(messages[messages.length - 1]);
    if (promptStart) {
      prompts++;
      bustsThisPrompt = 0;
    }
    const lost = prevCached - u.cache_read_input_tokens;
    if (lost > weights.bustSlack) {
      bustTokens += lost;
      if (promptStart) bustsAtPromptStart++;
      else {
        bustsInLoop++;
        bustTokensInLoop += lost;
        loopRewriteTokens += Math.max(0, u.cache_creation_input_tokens + u.input_tokens - newTokens(messages, prevMessages));
      }
      bustsThisPrompt++;
      maxBustsPerPrompt = Math.max(maxBustsPerPrompt, bustsThisPrompt);
    }
    prevCached = u.cache_read_input_tokens + u.cache_creation_input_tokens;
    prevMessages = messages.length;
  }
  const last = main[main.length - 1];
  const lu = last?.response?.usage;
  return {
    mainRequests: main.length,
    summaryCalls,
    refused,
    cost,
    sideCost,
    carriedHistoryCost: carriedHistoryCost(requests, weights),
    bustsInLoop,
    bustsAtPromptStart,
    maxBustsPerPrompt,
    bustTokens,
    bustTokensInLoop,
    loopRewriteTokens,
    loopRewriteCost: loopRewriteTokens * (weights.write - weights.read),
    finalContextTokens: lu ? lu.input_tokens + lu.cache_read_input_tokens + lu.cache_creation_input_tokens : 0,
    finalMix: contextMix(last?.body.messages ?? []),
    prompts,
  };
}
