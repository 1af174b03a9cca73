/** Fake OpenAI servers (Responses, the Codex backend, Chat Completions) for wire-level tests. See responses.ts / codex.ts / completions.ts. */
export * from "./types.ts";
export { startFakeResponses, type FakeResponses } from "./responses.ts";
export { codexAccessToken, DEFAULT_CODEX_ACCOUNT, replayedItems, startFakeCodex, type FakeCodex, type FakeCodexOptions } from "./codex.ts";
export { defaultOpenAiSideAnswer, openAiErrorBody } from "./emit.ts";
export { startFakeCompletions, type FakeCompletions } from "./completions.ts";
export { classifyResponses, classifyChat, responsesToolNames, responsesInstructions, chatInstructions, lastUserTextOfResponses, lastUserTextOfChat } from "./classify.ts";
export { validateResponsesInput, type ResponsesViolation } from "./responses-validate.ts";
export { validateChatMessages, type ChatViolation } from "./completions-validate.ts";
export { encryptReasoning, isValidEncryptedReasoning, DEFAULT_REASONING_SECRET } from "./reasoning.ts";
export { planAutoCache, reportedCached, unitTokens, type AutoCacheEntry, type AutoCacheOptions } from "./auto-cache.ts";
export { encodeResponsesEvents, outputItems, responsesEvents } from "./responses-sse.ts";
export { encodeChatChunks } from "./completions-sse.ts";
