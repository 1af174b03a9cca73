/**
 * Thought signatures issued by the fake Google server: base64 HMAC-SHA256(secret, the part's
 * content) — a function call's name, arguments and id, or a text part's text. Deterministic for
 * a secret, so a fresh server with the same secret (the default) accepts what an earlier one
 * issued (a resumed session), while a signature altered, or moved to another part, does not verify.
 */
import { createHmac } from "node:crypto";
import type { GeminiPart } from "./types.ts";

export const DEFAULT_SIGNATURE_SECRET = "pi-context-keeper-fake-google";

function signedContent(part: GeminiPart): string {
  if (part.functionCall) {
    const { name, args, id } = part.functionCall;
    return `call:${JSON.stringify({ name, args: args ?? {}, id: id ?? null })}`;
  }
  return `text:${part.thought ? "thought:" : ""}${part.text ?? ""}`;
}

export function signPart(part: GeminiPart, secret: string = DEFAULT_SIGNATURE_SECRET): string {
  return createHmac("sha256", secret).update(signedContent(part), "utf8").digest("base64");
}

export function isIssuedSignature(part: GeminiPart, signature: string, secret: string = DEFAULT_SIGNATURE_SECRET): boolean {
  return signature === signPart(part, secret);
}
