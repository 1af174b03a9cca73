/** The fake Google Generative AI server for wire-level tests. See server.ts. */
export * from "./types.ts";
export { startFakeGoogle, googleErrorBody, geminiUnits, modelOfPath, type FakeGoogle } from "./server.ts";
export { classifyGemini, declaredFunctions, geminiInstructions, geminiMajor, lastUserTextOfGemini } from "./classify.ts";
export { currentTurnStart, validateGeminiContents, type GeminiViolation } from "./validate.ts";
export { DEFAULT_SIGNATURE_SECRET, isIssuedSignature, signPart } from "./signature.ts";
export { encodeGeminiChunks, usageMetadataOf } from "./sse.ts";
