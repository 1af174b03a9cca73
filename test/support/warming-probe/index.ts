/**
 * A test extension that reports each of Pi's cache-warming decisions (`cache_warming_decision`)
 * as a notification: `[warming-probe] action=<Pi's action> p=<continuation probability>`
 * (idle warming: p = 0.15; during a run: 1). It never answers, so the decision stays the other
 * handlers' (the keeper's vote) or Pi's. Loaded with `-e test/support/warming-probe/index.ts`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export const WARMING_PROBE = "[warming-probe]";

export default function warmingProbe(pi: ExtensionAPI): void {
  pi.on("cache_warming_decision", (event, ctx) => {
    ctx.ui.notify(`${WARMING_PROBE} action=${event.action} p=${event.continuationProbability} warm=${event.warmCost.toFixed(6)} miss=${event.missCost.toFixed(6)}`, "info");
    return undefined;
  });
}
