/**
 * recallery's TypeScript client: every REST route the Python SDK covers, by the same names
 * (in camelCase), defaults and errors, through `fetch` only.
 *
 * ```ts
 * import { Client } from "recallery";
 * const ms = new Client("http://127.0.0.1:9380", { api_key: process.env.RECALLERY_API_KEY });
 * await ms.addTurn([memoryId], { user_input: "I moved to Lyon", agent_response: "Noted." });
 * const hits = await ms.search("where does the user live", [memoryId]);
 * ```
 *
 * Memory tools for the Vercel AI SDK are in `recallery/ai`.
 */
export { Client, DEFAULT_URL, OPERATIONS } from "./client.js";
export type { ClientOptions, Operations } from "./client.js";
export type { Call, RequestOptions, Time } from "./call.js";
export {
  CapacityExceeded,
  Conflict,
  ERROR_CODES,
  Forbidden,
  InvalidInput,
  ModelError,
  NotFound,
  RecalleryError,
  StoreError,
  Throttled,
  Unauthorized,
  errorFromEnvelope,
} from "./errors.js";
export {
  DEFAULT_KEYWORD_WEIGHT,
  DEFAULT_MAX_TOKENS,
  DEFAULT_SIMILARITY_THRESHOLD,
  DEFAULT_TOP_N,
} from "./messages.js";
export type { AddTurnOptions, ContextOptions, SearchOptions } from "./messages.js";
export type { EntryInput } from "./agents.js";
export type * from "./types.js";
export type { components, paths } from "./schema.js";
