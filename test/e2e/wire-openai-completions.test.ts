/** The keeper on the OpenAI Chat Completions wire (openai-completions: what llama.cpp, vLLM and Ollama speak) (see support/wire-suite.ts). */
import { wireSuite } from "./support/wire-suite.ts";

wireSuite("openai-completions");
