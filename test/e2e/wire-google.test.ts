/** The keeper on the Google Generative AI wire (google-generative-ai, Gemini 3: ids and thought signatures checked) (see support/wire-suite.ts). */
import { wireSuite } from "./support/wire-suite.ts";

wireSuite("google-generative-ai");
