/**
 * The memory operations: configuration, the message list, jobs, export and import
 * (the Python SDK's `recallery.client.memories`).
 */
import {
  type Call,
  type QueryValue,
  type RequestOptions,
  type Time,
  nothing,
  same,
  seg,
  split,
} from "./call.js";
import type {
  ChatCheck,
  Entry,
  EntryType,
  ExportRecord,
  ImportReport,
  Job,
  JobState,
  Memory,
  MemoryFields,
  MemorySummary,
  MessagePage,
  NewMemory,
  Origin,
  Page,
  Retried,
  Trust,
} from "./types.js";

type Options = Omit<NewMemory, "name" | "memory_type" | "embd_id" | "llm_id">;

/** Create a memory; `options` are any of the configuration fields (permissions...). What keeps
 * it from working as configured comes back in `warnings` and goes to the client's
 * `on_warning`. */
export function createMemory(
  name: string,
  memory_type: readonly EntryType[],
  embd_id: string,
  llm_id: string,
  options?: Options & RequestOptions,
): Call<Memory> {
  const [fields, request] = split(options);
  const json = { name, memory_type: [...memory_type], embd_id, llm_id, ...fields };
  return { method: "POST", path: "/memories", parse: same<Memory>, json, options: request };
}

export interface ListMemoriesOptions {
  keywords?: string;
  memory_types?: readonly EntryType[];
  storage_type?: string;
  owner_ids?: readonly string[];
  ids?: readonly string[];
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
}

export function listMemories(options?: ListMemoriesOptions & RequestOptions): Call<Page<MemorySummary>> {
  const [o, request] = split(options);
  const query = {
    keywords: o.keywords,
    memory_type: o.memory_types?.join(","),
    storage_type: o.storage_type,
    owner_ids: o.owner_ids?.join(","),
    ids: o.ids?.join(","),
    page: o.page ?? 1,
    page_size: o.page_size ?? 30,
  };
  const parse = (d: { memory_list: MemorySummary[]; total_count: number }) => ({
    items: d.memory_list,
    total: d.total_count,
  });
  return { method: "GET", path: "/memories", parse, query, options: request };
}

export function getMemory(memory_id: string, options?: RequestOptions): Call<Memory> {
  const path = `/memories/${seg(memory_id)}/config`;
  return { method: "GET", path, parse: same<Memory>, options: split(options)[1] };
}

export function updateMemory(
  memory_id: string,
  changes: MemoryFields,
  options?: RequestOptions,
): Call<Memory> {
  const path = `/memories/${seg(memory_id)}`;
  return { method: "PUT", path, parse: same<Memory>, json: changes, options: split(options)[1] };
}

export function deleteMemory(memory_id: string, options?: RequestOptions): Call<void> {
  const path = `/memories/${seg(memory_id)}`;
  return { method: "DELETE", path, parse: nothing, options: split(options)[1] };
}

/** A memory's message list filters (`recallery.MessageFilter`, by its SDK keyword). */
export interface ListMessagesOptions {
  agent_ids?: readonly string[];
  /** Session ids containing this text, any case. */
  keywords?: string;
  trust?: Trust | readonly Trust[];
  user_id?: string;
  session_id?: string;
  types?: EntryType | readonly EntryType[];
  status?: boolean;
  forgotten?: boolean;
  origin?: Origin | readonly Origin[];
  recorded_since?: Time;
  recorded_before?: Time;
  valid_since?: Time;
  valid_before?: Time;
  /** Default 1. */
  page?: number;
  /** Default 50. */
  page_size?: number;
}

interface MessageRow extends Entry {
  extract: Entry[];
  task: Job | Record<string, never>;
}

/** Raw turns newest first, each with its extracted entries and its extraction job. */
export function listMessages(
  memory_id: string,
  options?: ListMessagesOptions & RequestOptions,
): Call<MessagePage> {
  const [o, request] = split(options);
  const query: Record<string, QueryValue> = {
    page: o.page ?? 1,
    page_size: o.page_size ?? 50,
    agent_id: o.agent_ids,
    keywords: o.keywords,
    session_id: o.session_id,
    user_id: o.user_id,
    message_type: o.types,
    status: o.status,
    trust: o.trust,
    forgotten: o.forgotten,
    origin: o.origin,
    recorded_since: o.recorded_since,
    recorded_before: o.recorded_before,
    valid_since: o.valid_since,
    valid_before: o.valid_before,
  };
  const parse = (d: { messages: { message_list: MessageRow[]; total_count: number } }) => {
    const page: MessagePage = { items: [], total: d.messages.total_count, extracted: {}, jobs: {} };
    for (const { extract, task, ...entry } of d.messages.message_list) {
      page.items.push(entry as Entry);
      if (extract.length) page.extracted[entry.message_id] = extract;
      if (Object.keys(task).length) page.jobs[entry.message_id] = task as Job;
    }
    return page;
  };
  const path = `/memories/${seg(memory_id)}`;
  return { method: "GET", path, parse, query, options: request };
}

export interface JobsOptions {
  state?: JobState;
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
}

export function jobs(memory_id: string, options?: JobsOptions & RequestOptions): Call<Page<Job>> {
  const [o, request] = split(options);
  const query = { state: o.state, page: o.page ?? 1, page_size: o.page_size ?? 30 };
  const parse = (d: { jobs: Job[]; total_count: number }) => ({ items: d.jobs, total: d.total_count });
  return { method: "GET", path: `/memories/${seg(memory_id)}/jobs`, parse, query, options: request };
}

/** Queue one turn's extraction again (its last job must have finished); the new job. */
export function retryExtraction(
  memory_id: string,
  message_id: number,
  options?: RequestOptions,
): Call<Job> {
  const path = `/memories/${seg(memory_id)}/messages/${seg(message_id)}/extract`;
  return { method: "POST", path, parse: same<Job>, options: split(options)[1] };
}

/** Queue again every turn whose last extraction failed, was unparseable or invalid. */
export function retryFailedExtraction(memory_id: string, options?: RequestOptions): Call<Retried> {
  const path = `/memories/${seg(memory_id)}/jobs/retry`;
  return { method: "POST", path, parse: same<Retried>, options: split(options)[1] };
}

/** One tiny request through the memory's chat model: ok, or the model's error. */
export function testChatModel(memory_id: string, options?: RequestOptions): Call<ChatCheck> {
  const path = `/memories/${seg(memory_id)}/chat-test`;
  return { method: "POST", path, parse: same<ChatCheck>, options: split(options)[1] };
}

/** Records of a JSONL text; blank lines are skipped. */
export function parseJsonl(text: string): ExportRecord[] {
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as ExportRecord);
}

/** The memory as JSONL records (see `recallery.wire.transfer`). */
export function exportMemory(memory_id: string, options?: RequestOptions): Call<ExportRecord[]> {
  const path = `/memories/${seg(memory_id)}/export`;
  return { method: "GET", path, parse: parseJsonl, raw: true, options: split(options)[1] };
}

/** Import JSONL text or records into a memory, or into a new one when `memory_id` is null
 * (the records then start with an export's header). */
export function importMemory(
  memory_id: string | null,
  records: string | readonly ExportRecord[],
  options?: RequestOptions,
): Call<ImportReport> {
  const content =
    typeof records === "string" ? records : records.map((r) => JSON.stringify(r) + "\n").join("");
  const path = memory_id === null ? "/memories/import" : `/memories/${seg(memory_id)}/import`;
  const headers = { "Content-Type": "application/x-ndjson" };
  return { method: "POST", path, parse: same<ImportReport>, content, headers, options: split(options)[1] };
}
