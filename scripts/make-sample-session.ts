/**
 * Writes the bundled sample `samples/sample-session.jsonl`: a generated Claude Sonnet 4.5
 * coding session (test/support/report/provider-session.ts, seed 2026, 12 prompts, tool outputs up to 12 KB) whose usage
 * is computed by Anthropic's cache rule over an independent word-level tokenizer. It is not
 * a slice of the corpus the estimator's constants came from, so the report's figures on it are
 * out-of-sample for those constants.
 *
 *   npx bun scripts/make-sample-session.ts
 *
 * Entry ids and the header's timestamp are random (Pi's SessionManager makes them); everything
 * the replay reads is the same on every run.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateProviderSession, SONNET45 } from "../test/support/report/provider-session.ts";

const dir = mkdtempSync(join(tmpdir(), "keeper-sample-"));
try {
  const s = generateProviderSession({ seed: 2026, models: [SONNET45], prompts: 12, maxOutputChars: 12_000, dir });
  const out = join(import.meta.dir, "..", "samples", "sample-session.jsonl");
  writeFileSync(out, s.text);
  console.log(`${out}: ${s.requests} requests, ${s.text.length} bytes`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
