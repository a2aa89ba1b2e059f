/**
 * The client: sends the operations' calls through `fetch` and reads the envelopes. Each
 * operation becomes a method from its one definition (as `recallery.client.shells` does for
 * the Python SDK), named as the Python method in camelCase.
 */
import * as accounts from "./accounts.js";
import * as agents from "./agents.js";
import { type Call, type RequestOptions, queryString } from "./call.js";
import * as curation from "./curation.js";
import { RecalleryError, errorFromEnvelope, retryAfterSeconds } from "./errors.js";
import * as memories from "./memories.js";
import * as messages from "./messages.js";
import * as requestlog from "./requestlog.js";
import * as subjects from "./subjects.js";

export const DEFAULT_URL = "http://127.0.0.1:9380";

/** Every operation, by its method name (the Python SDK's `OPERATIONS`, in camelCase). */
export const OPERATIONS = {
  createMemory: memories.createMemory,
  listMemories: memories.listMemories,
  getMemory: memories.getMemory,
  updateMemory: memories.updateMemory,
  deleteMemory: memories.deleteMemory,
  listMessages: memories.listMessages,
  jobs: memories.jobs,
  retryExtraction: memories.retryExtraction,
  retryFailedExtraction: memories.retryFailedExtraction,
  testChatModel: memories.testChatModel,
  exportMemory: memories.exportMemory,
  importMemory: memories.importMemory,
  addTurn: messages.addTurn,
  search: messages.search,
  context: messages.context,
  recent: messages.recent,
  getEntry: messages.getEntry,
  setStatus: messages.setStatus,
  forget: messages.forget,
  restore: messages.restore,
  review: messages.review,
  correct: messages.correct,
  reinstate: messages.reinstate,
  erase: messages.erase,
  history: messages.history,
  evidence: messages.evidence,
  auditLog: accounts.auditLog,
  health: accounts.health,
  me: accounts.me,
  createUser: accounts.createUser,
  listUsers: accounts.listUsers,
  createApiKey: accounts.createApiKey,
  listApiKeys: accounts.listApiKeys,
  revokeApiKey: accounts.revokeApiKey,
  joinTeam: accounts.joinTeam,
  teamMembers: accounts.teamMembers,
  leaveTeam: accounts.leaveTeam,
  bulk: curation.bulk,
  reviewQueue: curation.reviewQueue,
  facts: curation.facts,
  timeline: curation.timeline,
  forgetSubject: curation.forgetSubject,
  eraseSubject: curation.eraseSubject,
  listSubjects: subjects.listSubjects,
  /** @deprecated Use `listSubjects`. */
  people: subjects.people,
  requestLog: requestlog.requestLog,
  /** @deprecated Use `requestLog`. */
  requests: requestlog.requests,
  entryReads: requestlog.entryReads,
  addEntries: agents.addEntries,
  taskStatus: agents.taskStatus,
} as const;

type Sent<F> = F extends (...args: infer A) => Call<infer T> ? (...args: A) => Promise<T> : never;
/** The client's methods: each operation, sent. */
export type Operations = { [K in keyof typeof OPERATIONS]: Sent<(typeof OPERATIONS)[K]> };

export interface ClientOptions {
  /** The API key, sent as `Authorization: Bearer <key>`. */
  api_key?: string | null;
  /** Seconds a request may take (default 60), each try on its own. */
  timeout?: number;
  /** Retries of an answer 429 (too many failed authentications from this address), each after
   * the `Retry-After` it gives (default 2; 0: none). */
  max_retries?: number;
  /** The longest `Retry-After` in seconds the client waits for; a longer one is thrown as
   * `Throttled` at once (default 60). */
  max_retry_wait?: number;
  /** Where warnings go (`data.warnings`, or a write's top-level `warnings`; default:
   * `process.emitWarning`, else `console.warn`). */
  on_warning?: (message: string) => void;
  /** The `fetch` to send with (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

function emitWarning(message: string): void {
  const process = (globalThis as { process?: { emitWarning?: (m: string, t: string) => void } })
    .process;
  if (typeof process?.emitWarning === "function") process.emitWarning(message, "RecalleryWarning");
  else console.warn(`RecalleryWarning: ${message}`);
}

function timeoutError(seconds: number): Error {
  const message = `recallery did not answer within ${seconds} s`;
  return typeof DOMException === "function"
    ? new DOMException(message, "TimeoutError")
    : Object.assign(new Error(message), { name: "TimeoutError" });
}

/** A signal that aborts when `outer` does or after `seconds`; `done` stops the timer. */
function deadline(outer: AbortSignal | undefined, seconds: number) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(timeoutError(seconds)), seconds * 1000);
  const done = () => {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  };
  return { signal: controller.signal, done };
}

/** Wait `seconds`, or reject with the signal's reason when it aborts first. */
function pause(seconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

class ClientBase {
  readonly base_url: string;
  readonly api_url: string;
  readonly timeout: number;
  readonly max_retries: number;
  readonly max_retry_wait: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof globalThis.fetch;
  readonly #onWarning: (message: string) => void;

  constructor(base_url: string = DEFAULT_URL, options: ClientOptions = {}) {
    this.base_url = base_url.replace(/\/+$/, "");
    this.api_url = `${this.base_url}/api/v1`;
    this.timeout = options.timeout ?? 60;
    this.max_retries = options.max_retries ?? 2;
    this.max_retry_wait = options.max_retry_wait ?? 60;
    this.#headers = options.api_key ? { Authorization: `Bearer ${options.api_key}` } : {};
    this.#fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.#onWarning = options.on_warning ?? emitWarning;
  }

  /** Send a call and read its answer: the result, or the error its envelope stands for. */
  async run<T>(call: Call<T>): Promise<T> {
    const url = this.api_url + call.path + queryString(call.query);
    const request: RequestOptions = call.options ?? {};
    for (let attempt = 0; ; attempt++) {
      const limit = deadline(request.signal, request.timeout ?? this.timeout);
      try {
        const response = await this.#fetch(url, this.#init(call, limit.signal));
        const text = await response.text();
        const wait = retryAfterSeconds(response.headers.get("retry-after"));
        if (response.status !== 429 || attempt >= this.max_retries || (wait ?? 0) > this.max_retry_wait) {
          return this.#result(call, response.status, url, text, wait);
        }
        limit.done();
        await pause(wait ?? 1, request.signal);
      } finally {
        limit.done();
      }
    }
  }

  #init(call: Call<unknown>, signal: AbortSignal): RequestInit {
    const headers: Record<string, string> = { ...this.#headers, ...call.headers };
    const init: RequestInit = { method: call.method, headers, signal };
    if (call.content !== undefined) init.body = call.content;
    else if (call.json !== undefined) {
      init.body = JSON.stringify(call.json);
      headers["Content-Type"] = "application/json";
    }
    return init;
  }

  #result<T>(call: Call<T>, status: number, url: string, text: string, wait?: number): T {
    const ok = status >= 200 && status < 300;
    if (call.raw && ok) return call.parse(text);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RecalleryError(`HTTP ${status} from ${url}: not a recallery answer`, { status });
    }
    if (body === null || typeof body !== "object" || (body as { code?: unknown }).code !== 0) {
      const envelope = body !== null && typeof body === "object" ? body : {};
      throw errorFromEnvelope(envelope as Record<string, unknown>, status, wait);
    }
    const data = (body as { data?: unknown }).data;
    // warnings ride in `data`, or beside it where `data` is a list (a write's turns)
    for (const holder of [data, body]) {
      const warnings = (holder as { warnings?: unknown } | null)?.warnings;
      if (Array.isArray(warnings)) for (const message of warnings) this.#onWarning(String(message));
    }
    return call.parse(data);
  }
}

/** recallery's REST API, every route the Python SDK covers:
 *
 * ```ts
 * const ms = new Client("http://127.0.0.1:9380", { api_key: "rc-..." });
 * const hits = await ms.search("where does the user live", [memoryId]);
 * ```
 */
export interface Client extends Operations {}
export class Client extends ClientBase {}

for (const [name, op] of Object.entries(OPERATIONS)) {
  Object.defineProperty(Client.prototype, name, {
    value: function (this: Client, ...args: unknown[]) {
      return this.run((op as (...a: unknown[]) => Call<unknown>)(...args));
    },
    writable: true,
    configurable: true,
  });
}
