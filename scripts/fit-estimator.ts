/**
 * Reproduces the token estimator's fixed constants and reports calibration figures.
 *
 *   npx bun scripts/fit-estimator.ts [session.jsonl ...]     (default: corpus/large-session.jsonl)
 *
 * For each session:
 * 1. The fixed constants' definition: least squares (no ridge) of the recorded prompt size over
 *    the message blocks of every billed request, thinking blocks counted as sent —
 *    prompt ≈ C + a·blocks + prose/p + code/c. On the corpus this gives the constants in
 *    `src/cache/token-estimator.ts` (prose 3.2, code 3.1 chars/token, 21 tokens per block,
 *    rounded from 3.215, 3.081, 21.32) and `DEFAULT_UNKNOWN_PROMPT` in `src/report/replay.ts`
 *    (C = 1565 tokens of unknown tools + system).
 * 2. Calibration of the replay (Σ|Δread| + |Δwrite| + |Δuncached| over Σ recorded):
 *    - fixed constants: in-sample on the corpus they came from, out-of-sample elsewhere;
 *    - per-session fit (what the report uses): in-sample, and cross-validated (fitted on the
 *      first half of the requests, scored on the second);
 *    each with the recorded external invalidations replayed and with TTL expiry only.
 */
import { join } from "node:path";
import { fitEstimatorToUsage } from "../src/cache/estimator-fit.ts";
import { DEFAULT_ESTIMATOR_OPTIONS } from "../src/cache/token-estimator.ts";
import { registryCostModels } from "../src/report/cli/model-prices.ts";
import { DEFAULT_UNKNOWN_PROMPT, replaySession } from "../src/report/replay.ts";

const pct = (x: number | undefined) => (x === undefined ? "-" : `${(x * 100).toFixed(2)}%`);
const files = process.argv.slice(2);
if (files.length === 0) files.push(join(import.meta.dir, "..", "corpus", "large-session.jsonl"));
const costModels = registryCostModels();

for (const file of files) {
  const fixed = replaySession({ file, costModels });
  const perSession = replaySession({ file, costModels, calibrate: "per-session" });
  const samples = fixed.requests.map((r) => ({ body: r.body, recordedPrompt: r.recorded.input + r.recorded.cacheRead + r.recorded.cacheWrite }));
  const original = fitEstimatorToUsage(samples, { ridge: 0, layers: "messages", closedCycleThinking: "billed", minSamples: 2 });
  const e = original.estimator;
  const d = DEFAULT_ESTIMATOR_OPTIONS;
  console.log(`${file}: ${fixed.requests.length} billed requests`);
  console.log(`  least squares, message blocks (the fixed constants' definition)${original.fitted ? "" : ` — refused (${original.reason}), the constants are shown`}:`);
  console.log(`    prose ${e.proseCharsPerToken.toFixed(3)} chars/token (constant ${d.proseCharsPerToken}), code ${e.codeCharsPerToken.toFixed(3)} (constant ${d.codeCharsPerToken}), ` +
    `${e.blockOverheadTokens.toFixed(2)} tokens per block (constant ${d.blockOverheadTokens}), C ${original.promptOverheadTokens.toFixed(0)} tokens of tools + system ` +
    `(constant ${DEFAULT_UNKNOWN_PROMPT.toolsTokens + DEFAULT_UNKNOWN_PROMPT.systemTokens}); prompt-size error ${pct(original.promptSizeError)}`);
  const fit = perSession.fit?.all;
  console.log(`  per-session fit (all blocks, ridge toward the constants): ${fit?.fitted ? `prose ${fit.estimator.proseCharsPerToken.toFixed(3)}, code ${fit.estimator.codeCharsPerToken.toFixed(3)}, ${fit.estimator.blockOverheadTokens.toFixed(2)} per block, ${fit.promptOverheadTokens.toFixed(0)} per request` : `refused (${fit?.reason})`}`);
  console.log(`  calibration error          replayed invalidations   TTL only`);
  console.log(`    fixed constants          ${pct(fixed.calibration.total_error).padStart(8)}                 ${pct(fixed.calibration.total_error_ttl_only).padStart(8)}`);
  console.log(`    per-session, in-sample   ${pct(perSession.calibration.total_error).padStart(8)}                 ${pct(perSession.calibration.total_error_ttl_only).padStart(8)}`);
  console.log(`    per-session, cross-val.  ${pct(perSession.fit?.crossValidated?.total_error).padStart(8)}   (fitted on the first ${perSession.fit?.families[0]?.firstHalfRequests ?? 0} requests, scored on the rest)`);
  console.log(`  external invalidations replayed: ${fixed.externalInvalidations.length}`);
}
