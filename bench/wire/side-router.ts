/** The fake server's answer to side requests in the benchmark: realistic summaries (fake-summary.ts). */
import { defaultSideRouter } from "../../test/support/fake-anthropic/server.ts";
import { lastUserText, PI_SUMMARIZATION_PROMPT_START, systemText } from "../../test/support/fake-anthropic/classify.ts";
import type { SideRouter } from "../../test/support/fake-anthropic/types.ts";
import { fakeSummaryOf } from "./fake-summary.ts";

export const benchSideRouter: SideRouter = (ctx) => {
  const system = systemText(ctx.request.body);
  if (system.includes(PI_SUMMARIZATION_PROMPT_START)) return defaultSideRouter(ctx);
  const input = lastUserText(ctx.request.body);
  const fuse = /\bfusing\b|\bfuse\b/i.test(system) || /\bfusing\b/i.test(input.slice(0, 400));
  return { text: fakeSummaryOf(input, { fuse }) };
};
