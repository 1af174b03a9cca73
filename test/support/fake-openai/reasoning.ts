/**
 * Encrypted reasoning content issued by the fake Responses server: `fakeenc_` + base64
 * HMAC-SHA256(secret, item id). Deterministic for a secret, so a fresh server with the same
 * secret (the default) still accepts what an earlier one issued (a resumed session), and any
 * edit — or content moved to another item — fails verification.
 */
import { createHmac } from "node:crypto";

export const DEFAULT_REASONING_SECRET = "pi-context-keeper-fake-openai";

export function encryptReasoning(itemId: string, secret: string = DEFAULT_REASONING_SECRET): string {
  return "fakeenc_" + createHmac("sha256", secret).update(itemId, "utf8").digest("base64");
}

export function isValidEncryptedReasoning(itemId: string, content: unknown, secret: string = DEFAULT_REASONING_SECRET): boolean {
  return typeof content === "string" && content === encryptReasoning(itemId, secret);
}
