/**
 * Thinking signatures issued by the fake server.
 *
 * A signature is `fakesig_` + base64 HMAC-SHA256(secret, thinking text). It is deterministic for
 * a given secret, so a fresh server with the same secret (the default) still recognizes the
 * signatures a previous server issued — handy when a test resumes a session with `--continue`.
 */
import { createHmac } from "node:crypto";

export const DEFAULT_SIGNATURE_SECRET = "pi-context-keeper-fake-anthropic";

export function signThinking(text: string, secret: string = DEFAULT_SIGNATURE_SECRET): string {
  return "fakesig_" + createHmac("sha256", secret).update(text, "utf8").digest("base64");
}

export function isValidThinkingSignature(text: string, signature: string, secret: string = DEFAULT_SIGNATURE_SECRET): boolean {
  return signature === signThinking(text, secret);
}
