/**
 * Main loop vs side requests on Google's format, by the fake Anthropic server's rule
 * (../fake-anthropic/classify.ts): main when the function declarations offer one of Pi's
 * built-in coding tools and the system instruction is not Pi's summarization prompt; side
 * otherwise (Pi's compaction and branch summaries, this project's summarizer calls).
 */
import { PI_BUILTIN_TOOLS, PI_SUMMARIZATION_PROMPT_START } from "../fake-anthropic/classify.ts";
import type { GeminiContent, GeminiRequest } from "./types.ts";

/** The text of the system instruction. */
export function geminiInstructions(body: GeminiRequest): string {
  return (body.systemInstruction?.parts ?? []).map((p) => p.text ?? "").join("\n");
}

/** The names of the declared functions. */
export function declaredFunctions(body: GeminiRequest): string[] {
  return (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => String(d.name)));
}

export function classifyGemini(body: GeminiRequest): "main" | "side" {
  if (!declaredFunctions(body).some((n) => (PI_BUILTIN_TOOLS as readonly string[]).includes(n))) return "side";
  return geminiInstructions(body).includes(PI_SUMMARIZATION_PROMPT_START) ? "side" : "main";
}

/** Text of the last user content with text parts (the human prompt), "" when none. */
export function lastUserTextOfGemini(contents: GeminiContent[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]!;
    const texts = c.role === "user" ? c.parts.filter((p) => typeof p.text === "string") : [];
    if (texts.length > 0) return texts.map((p) => p.text).join("\n");
  }
  return "";
}

/** The major version of a Gemini model id (`gemini-3-flash-preview` → 3), undefined for another model. */
export function geminiMajor(modelId: string): number | undefined {
  const m = /^gemini(?:-live)?-(\d+)/.exec(modelId.toLowerCase());
  return m ? Number(m[1]) : undefined;
}
