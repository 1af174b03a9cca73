/** The keeper on the OpenAI Chat Completions wire (openai-completions: what llama.cpp, vLLM and Ollama speak) (see support/openai-suite.ts). */
import { openAiWireSuite } from "./support/openai-suite.ts";

openAiWireSuite("openai-completions");
