/** The keeper on the OpenAI Responses wire (openai-responses) (see support/openai-suite.ts). */
import { openAiWireSuite } from "./support/openai-suite.ts";

openAiWireSuite("openai-responses");
