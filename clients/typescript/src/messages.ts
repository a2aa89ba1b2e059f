/**
 * The message operations: turns, search and context, and the life of one entry (the Python
 * SDK's `recallery.client.messages`). The search knobs are the search route's parameters as
 * the OpenAPI schema declares them, so a knob the server adds is one the client takes.
 */
import {
  type Call,
  type QueryValue,
  type RequestOptions,
  type Time,
  same,
  seg,
  split,
  wireTime,
} from "./call.js";
import type {
  Context,
  Entry,
  EntryType,
  EraseReceipt,
  Hit,
  Origin,
  SearchQuery,
  SearchTrust,
  Verdict,
} from "./types.js";

/** The Python SDK's defaults (`recallery.requests.search`). */
export const DEFAULT_TOP_N = 5;
export const DEFAULT_SIMILARITY_THRESHOLD = 0.2;
export const DEFAULT_KEYWORD_WEIGHT = 0.7;
export const DEFAULT_MAX_TOKENS = 2000;

export interface AddTurnOptions {
  user_input: string;
  agent_response: string;
  /** Default "". */
  agent_id?: string;
  /** Default "". */
  session_id?: string;
  user_id?: string | null;
  conversation_time?: Time | null;
}

/** Store a conversation turn in each memory; returns the raw entries written. */
export function addTurn(
  memory_ids: readonly string[],
  turn: AddTurnOptions & RequestOptions,
): Call<Entry[]> {
  const [t, request] = split(turn);
  const json: Record<string, unknown> = {
    memory_id: [...memory_ids],
    agent_id: t.agent_id ?? "",
    session_id: t.session_id ?? "",
    user_input: t.user_input,
    agent_response: t.agent_response,
  };
  if (t.user_id != null) json["user_id"] = t.user_id;
  if (t.conversation_time != null) json["conversation_time"] = wireTime(t.conversation_time);
  return { method: "POST", path: "/messages", parse: same<Entry[]>, json, options: request };
}

type Knobs = Omit<
  SearchQuery,
  "query" | "memory_id" | "message_type" | "top_n" | "as_of" | "valid_on" | "trust" | "origin"
>;

/** Every knob of `recallery.SearchRequest` by its SDK name; what is not given is left to the
 * server (its default or setting), except the three defaults the Python SDK sends. */
export interface SearchOptions extends Knobs {
  /** How many results at most (1-100); default 5. */
  top_n?: number;
  /** Only entries of these types (default: every type). */
  types?: readonly EntryType[];
  /** What the store knew at this time (default: now). */
  as_of?: Time;
  /** What was true at this time (default: now). */
  valid_on?: Time;
  trust?: SearchTrust | readonly SearchTrust[];
  origin?: Origin | readonly Origin[];
}

export interface ContextOptions extends SearchOptions {
  /** The block's budget in tokens; default 2000. */
  max_tokens?: number;
}

/** The search's arguments by their wire names; lists are one comma-separated text in a query
 * string (the memory ids repeat there) and arrays in a body. */
function knobs(
  query: string,
  memory_ids: readonly string[],
  options: SearchOptions,
  body: boolean,
): Record<string, QueryValue> {
  const given: Record<string, unknown> = {
    top_n: DEFAULT_TOP_N,
    similarity_threshold: DEFAULT_SIMILARITY_THRESHOLD,
    keywords_similarity_weight: DEFAULT_KEYWORD_WEIGHT,
    ...options,
  };
  const sent: Record<string, QueryValue> = { query, memory_id: [...memory_ids] };
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === null) continue;
    const wire = name === "types" ? "message_type" : name;
    if (Array.isArray(value)) sent[wire] = body ? [...value] : value.join(",");
    else sent[wire] = wireTime(value as string | number | boolean | Date);
  }
  return sent;
}

/** Hybrid search, best first. */
export function search(
  query: string,
  memory_ids: readonly string[],
  options?: SearchOptions & RequestOptions,
): Call<Hit[]> {
  const [o, request] = split(options);
  const sent = knobs(query, memory_ids, o, false);
  return { method: "GET", path: "/messages/search", parse: same<Hit[]>, query: sent, options: request };
}

/** A token-bounded block of the best entries, fenced as data, for a prompt. */
export function context(
  query: string,
  memory_ids: readonly string[],
  options?: ContextOptions & RequestOptions,
): Call<Context> {
  const [{ max_tokens, ...o }, request] = split(options);
  const json = { ...knobs(query, memory_ids, o, true), max_tokens: max_tokens ?? DEFAULT_MAX_TOKENS };
  return { method: "POST", path: "/messages/context", parse: same<Context>, json, options: request };
}

export interface RecentOptions {
  agent_id?: string;
  session_id?: string;
  /** Default 10. */
  limit?: number;
}

/** The latest entries of the memories, newest first. */
export function recent(
  memory_ids: readonly string[],
  options?: RecentOptions & RequestOptions,
): Call<Entry[]> {
  const [o, request] = split(options);
  const query = {
    memory_id: [...memory_ids],
    agent_id: o.agent_id,
    session_id: o.session_id,
    limit: o.limit ?? 10,
  };
  return { method: "GET", path: "/messages", parse: same<Entry[]>, query, options: request };
}

function entryPath(memory_id: string, message_id: number): string {
  return `/messages/${seg(memory_id)}:${seg(message_id)}`;
}

function changed(data: { changed: number[] }): number[] {
  return data.changed;
}

/** An entry with its vector. */
export function getEntry(
  memory_id: string,
  message_id: number,
  options?: RequestOptions,
): Call<[Entry, number[] | null]> {
  const parse = (d: Entry & { content_embed: number[] | null }): [Entry, number[] | null] => {
    const { content_embed, id: _id, zone_id: _zone, ...entry } = d as typeof d & {
      id: string;
      zone_id: number;
    };
    return [entry, content_embed];
  };
  const path = entryPath(memory_id, message_id) + "/content";
  return { method: "GET", path, parse, options: split(options)[1] };
}

/** Enable or disable an entry (and what was extracted from it); returns the ids changed. */
export function setStatus(
  memory_id: string,
  message_id: number,
  enabled: boolean,
  options?: RequestOptions,
): Call<number[]> {
  const path = entryPath(memory_id, message_id);
  return { method: "PUT", path, parse: changed, json: { status: enabled }, options: split(options)[1] };
}

export function forget(memory_id: string, message_id: number, options?: RequestOptions): Call<number[]> {
  const path = entryPath(memory_id, message_id);
  return { method: "DELETE", path, parse: changed, json: {}, options: split(options)[1] };
}

export function restore(memory_id: string, message_id: number, options?: RequestOptions): Call<number[]> {
  const path = entryPath(memory_id, message_id) + "/restore";
  return { method: "POST", path, parse: changed, options: split(options)[1] };
}

/** `verdict` is `confirmed` or `rejected`. */
export function review(
  memory_id: string,
  message_id: number,
  verdict: Verdict,
  reason = "",
  options?: RequestOptions,
): Call<Entry> {
  const path = entryPath(memory_id, message_id) + "/review";
  const json = { verdict, reason };
  return { method: "POST", path, parse: same<Entry>, json, options: split(options)[1] };
}

export interface CorrectOptions {
  /** Default "". */
  reason?: string;
  valid_at?: Time | null;
}

/** Write a corrected version; returns the new current entry. */
export function correct(
  memory_id: string,
  message_id: number,
  content: string,
  options?: CorrectOptions & RequestOptions,
): Call<Entry> {
  const [o, request] = split(options);
  const json = { content, reason: o.reason ?? "", valid_at: wireTime(o.valid_at ?? null) };
  const path = entryPath(memory_id, message_id) + "/correct";
  return { method: "POST", path, parse: same<Entry>, json, options: request };
}

/** Make a retired version current again; returns the reinstated entry. */
export function reinstate(
  memory_id: string,
  message_id: number,
  reason: string,
  options?: RequestOptions,
): Call<Entry> {
  const path = entryPath(memory_id, message_id) + "/reinstate";
  return { method: "POST", path, parse: same<Entry>, json: { reason }, options: split(options)[1] };
}

/** Erase an entry with its versions and extracts; cannot be undone. */
export function erase(
  memory_id: string,
  message_id: number,
  options?: { reason?: string } & RequestOptions,
): Call<EraseReceipt> {
  const [o, request] = split(options);
  const path = entryPath(memory_id, message_id) + "/erase";
  const json = { reason: o.reason ?? "" };
  return { method: "POST", path, parse: same<EraseReceipt>, json, options: request };
}

/** Every version of an entry, oldest first. */
export function history(memory_id: string, message_id: number, options?: RequestOptions): Call<Entry[]> {
  const path = entryPath(memory_id, message_id) + "/history";
  return { method: "GET", path, parse: same<Entry[]>, options: split(options)[1] };
}

/** The raw turns that support an entry. */
export function evidence(memory_id: string, message_id: number, options?: RequestOptions): Call<number[]> {
  const parse = (d: { source_ids: number[] }) => d.source_ids;
  const path = entryPath(memory_id, message_id) + "/evidence";
  return { method: "GET", path, parse, options: split(options)[1] };
}
