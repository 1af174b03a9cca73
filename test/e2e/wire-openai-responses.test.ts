/** The keeper on the OpenAI Responses wire (openai-responses) (see support/wire-suite.ts). */
import { wireSuite } from "./support/wire-suite.ts";

wireSuite("openai-responses");
