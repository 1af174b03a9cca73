/** Fake Anthropic Messages server for wire-level tests. See server.ts for the behaviour. */
export * from "./types.ts";
export { startFakeAnthropic, defaultSideRouter, type FakeAnthropic, type FakeAnthropicOptions } from "./server.ts";
export { classifyRequest, classifyByLastUserText, lastUserText, systemText, PI_BUILTIN_TOOLS, PI_SUMMARIZATION_PROMPT_START } from "./classify.ts";
export { validateRequest, countCacheControlMarks, currentToolLoopStart, isHumanTurn, MAX_CACHE_CONTROL_MARKS } from "./validate.ts";
export { signThinking, isValidThinkingSignature, DEFAULT_SIGNATURE_SECRET } from "./signature.ts";
export { planUsage, tokensOfText, type CacheEntry, type CacheState, type UsagePlan } from "./usage-model.ts";
export { encodeSseEvents, errorBody } from "./sse.ts";
export { parseSseStream, type SseEvent } from "./sse-parse.ts";
export { createThreadStore, replyMessage, MESSAGE_THREADS_BETA, type ThreadErrorCode, type ThreadOptions, type ThreadStore, type ThreadUse } from "./threads.ts";
export { createBindingStore, dropsMismatchedBlocks, type BindingStore, type InputTransformation } from "./binding.ts";
