/**
 * The default adapter: Pi's own preparation (rebuilt in `prepare.ts`) and Pi's exported
 * `compact()` for the summary, so a background summary reads like one Pi made itself
 * (previous-summary merging, split turns, file-operation tags, active model and thinking).
 * A split turn's two summaries run at once (`split-parallel.ts`).
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ExtensionContext, compact as piCompact } from "@earendil-works/pi-coding-agent";
import type { StreamFn, ThinkingLevel } from "@earendil-works/pi-agent-core";
import type { AsyncCompactionAdapter } from "./adapter.ts";
import { prepareCompaction } from "./prepare.ts";
import { compactSplitInParallel, splitsInTwo } from "./split-parallel.ts";
import type { CompactionPreparation, CompactionResult, PiCompactionPrimitives } from "./primitives.ts";

/** Bump when the summary prompt or preparation changes meaning. */
export const DEFAULT_PROMPT_VERSION = "pi-compact-1";

/** Pi's exported `compact()` (positional: preparation, model, apiKey, headers, customInstructions, signal, thinkingLevel, streamFn, env, ...). */
export type PiCompactFn = typeof piCompact;

export interface DefaultAdapterOptions {
  compact: PiCompactFn;
  primitives: PiCompactionPrimitives;
  label?: string;
  id?: string;
}

async function resolveAuth(ctx: ExtensionContext, model: Model<Api>) {
  const auth = await ctx.modelRegistry.getApiKeyAndHeaders(model);
  if (!auth.ok) throw new Error(`no credentials for ${model.provider}/${model.id}: ${auth.error}`);
  return auth;
}

export function createDefaultAdapter(options: DefaultAdapterOptions): AsyncCompactionAdapter<CompactionPreparation, CompactionResult> {
  return {
    id: options.id ?? "pi-default",
    label: options.label ?? "async compaction",
    prepare: ({ branch, settings }) => prepareCompaction(branch, settings, options.primitives),
    createSnapshot: (prepared, context) => ({ ...context, firstKeptEntryId: prepared.firstKeptEntryId, promptVersion: DEFAULT_PROMPT_VERSION }),
    run: async (prepared, { ctx, model, signal, thinkingLevel, meter }) => {
      const auth = await resolveAuth(ctx, model);
      const headers = auth.headers as Record<string, string> | undefined;
      // Metered, the calls go through Pi's model runtime (the stream function Pi's own compaction uses), each one counted.
      const streamFn: StreamFn | undefined = meter ? meter.wrap<StreamFn>((m, c, o) => ctx.modelRegistry.streamSimple(m, c as never, o)) : undefined;
      const call = (p: CompactionPreparation) => options.compact(p, model, auth.apiKey, headers, undefined, signal, thinkingLevel as ThinkingLevel, streamFn, auth.env);
      // A split turn's two summaries are independent: ask for both at once (same text as Pi's).
      return splitsInTwo(prepared) ? compactSplitInParallel(prepared, call) : call(prepared);
    },
    toCompaction: (result) => ({
      summary: result.summary,
      firstKeptEntryId: result.firstKeptEntryId,
      tokensBefore: result.tokensBefore,
      details: result.details,
      usage: result.usage,
    }),
  };
}
