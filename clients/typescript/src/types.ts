/**
 * The shapes the client sends and reads. What a request takes comes from the generated
 * OpenAPI types (`schema.ts`), so it cannot drift from the server; what an answer holds is the
 * JSON the server writes (`recallery.wire`), with the Python SDK's names where it unwraps one
 * (`Page.items`/`total`, tuples). Times are the texts the server writes.
 */
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Query<P extends keyof paths, M extends "get" | "post" | "put" | "delete"> = NonNullable<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (paths[P][M] extends { parameters: { query?: infer Q } } ? Q : never) & {}
>;

// --- what requests take (from the schema) -----------------------------------------------------

export type NewMemory = Schemas["NewMemory"];
export type MemoryFields = Schemas["MemoryFields"];
export type EntryType = NewMemory["memory_type"][number];
export type StatedEntry = Schemas["StatedEntries"]["entries"][number];
export type MessageFilter = NonNullable<Schemas["Bulk"]["filter"]>;
export type BulkAction = Schemas["Bulk"]["action"];
export type Verdict = Schemas["Review"]["verdict"];

/** The search route's query parameters, as the schema declares them. */
export type SearchQuery = Query<"/api/v1/messages/search", "get">;
export type ContextQuery = Schemas["ContextQuery"];
export type MessagesQuery = Query<"/api/v1/memories/{memory_id}", "get">;
export type JobsQuery = Query<"/api/v1/memories/{memory_id}/jobs", "get">;
export type TimelineQuery = Query<"/api/v1/memories/{memory_id}/timeline", "get">;
/** The Facts listing's query parameters (`recallery.FactFilter`, by wire name). */
export type FactsQuery = Query<"/api/v1/memories/{memory_id}/facts", "get">;
export type RequestsQuery = Query<"/api/v1/admin/requests", "get">;
export type SubjectsQuery = Query<"/api/v1/subjects", "get">;
/** @deprecated The old name of `SubjectsQuery` (`GET /people` is `GET /subjects`). */
export type PeopleQuery = SubjectsQuery;

export type Fusion = NonNullable<SearchQuery["fusion"]>;
export type SearchTrust = NonNullable<SearchQuery["trust"]>[number];
export type Trust = NonNullable<MessageFilter["trust"]> extends infer T
  ? T extends readonly (infer U)[]
    ? U
    : never
  : never;
export type Origin = NonNullable<SearchQuery["origin"]>[number];
export type Capability = "read" | "write" | "manage";
export type JobState = "queued" | "running" | "done" | "failed" | "parked";

// --- what answers hold (recallery.wire) -------------------------------------------------------

/** A page of results: the items and how many there are in all. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** An entry: a raw turn or what was extracted from one, as the server writes it. */
export interface Entry {
  message_id: number;
  message_type: EntryType;
  source_id: number | null;
  memory_id: string;
  user_id: string;
  agent_id: string;
  session_id: string;
  valid_at: string;
  invalid_at: string | null;
  forget_at: string | null;
  status: boolean;
  content: string;
  tenant_id: string;
  trust: Trust;
  origin: Origin;
  recorded_at: string;
  retired_at: string | null;
  supersedes: number | null;
  superseded_by: number | null;
  last_used_at: string | null;
  use_count: number;
  size_bytes: number;
}

/** A search result: the entry and its fused, keyword and vector scores. */
export interface Hit extends Entry {
  score: number;
  keyword_score: number;
  vector_score: number;
  /** With `explain`: the score's contributions by ranking stage, in order; they add up to
   * `score`. */
  why?: Record<string, number>;
}

/** A token-bounded block of the best entries, fenced as data, for a prompt. */
export interface Context {
  text: string;
  message_ids: number[];
  tokens: number;
  truncated: boolean;
}

/** A memory's configuration (create, update and config routes). */
export interface Memory {
  id: string;
  name: string;
  avatar: string | null;
  tenant_id: string;
  owner_name: string | null;
  memory_type: EntryType[];
  storage_type: string;
  embd_id: string;
  llm_id: string;
  permissions: "me" | "team";
  description: string | null;
  memory_size: number;
  forgetting_policy: "FIFO" | "LRU";
  temperature: number;
  system_prompt: string | null;
  user_prompt: string | null;
  create_time: number | null;
  create_date: string | null;
  update_time: number | null;
  update_date: string | null;
  used_bytes: number;
  entry_count: number;
  /** The local model an `@Builtin` embd_id resolved to at creation (null: a provider's). */
  local_model: string | null;
  /** What keeps the memory from working as configured (also given to `on_warning`). */
  warnings?: string[];
}

/** A memory as the list route shows it. */
export interface MemorySummary {
  id: string;
  name: string;
  avatar: string | null;
  tenant_id: string;
  owner_name: string | null;
  memory_type: EntryType[];
  storage_type: string;
  embd_id: string;
  embd_name: string;
  llm_id: string;
  permissions: "me" | "team";
  description: string | null;
  create_time: number | null;
  create_date: string | null;
}

/** A background job (an extraction), shaped as RAGFlow's task row plus recallery's fields. */
export interface Job {
  id: number;
  kind: string;
  tenant_id: string;
  memory_id: string;
  message_id: number | null;
  state: JobState;
  attempts: number;
  progress: number;
  progress_msg: string;
  outcome: string | null;
  result: Record<string, unknown>;
  create_time: number;
  update_time: number;
  run_after: number | null;
  lease_until: number | null;
  lease_owner: string | null;
}

/** A memory's raw turns, newest first, with what was extracted from each and its job. */
export interface MessagePage extends Page<Entry> {
  /** Extracted entries by the raw turn's message id. */
  extracted: Record<number, Entry[]>;
  /** The extraction job by the raw turn's message id. */
  jobs: Record<number, Job>;
}

export interface EraseReceipt {
  memory_id: string;
  requested: number;
  erased: number[];
  at: string;
  actor: string;
  reason: string;
}

export interface Retried {
  memory_id: string;
  job_ids: number[];
  message_ids: number[];
}

export interface ChatCheck {
  llm_id: string;
  ok: boolean;
  answer: string;
  error: string;
  latency_ms: number;
}

export interface ImportReport {
  memory_id: string;
  imported: number;
  id_map: Record<string, number>;
  skipped_extracted: number;
  already_stored: number;
  disabled: number;
  forgotten: number;
}

export interface User {
  id: string;
  name: string;
  is_admin: boolean;
  created_at: string;
}

export interface ApiKey {
  id: string;
  user_id: string;
  name: string;
  scope: string[] | null;
  created_at: string;
  revoked_at: string | null;
  capabilities: Capability[] | null;
}

/** The caller: user, teams, the key's scope and what the key may do. */
export interface Principal {
  id: string;
  name: string;
  is_admin: boolean;
  tenant_ids: string[];
  scope: string[] | null;
  capabilities: Capability[];
  key_id: string;
}

export interface AuditEvent {
  id: number;
  at: string;
  actor: string;
  action: string;
  memory_id: string | null;
  message_id: number | null;
  reason: string;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** What became of one stated entry: added, a duplicate, superseding one, or suppressed. */
export interface EntryOutcome {
  index: number;
  action: string;
  message_id: number | null;
  target: number | null;
  reason: string;
}

export interface AddedEntries {
  memory_id: string;
  counts: Record<string, number>;
  outcomes: EntryOutcome[];
  notes: string[];
  llm: { calls: number; prompt_tokens: number; completion_tokens: number; latency_ms: number };
}

export interface BulkResult {
  action: BulkAction;
  dry_run: boolean;
  count: number;
  selected: number;
  ids: number[];
  changed: number[];
  /** Apply with this token to change exactly what the dry run found. */
  token: string;
}

/** What became of the facts a Facts listing's filters select; `erased` and `evicted` are null
 * when a filter other than the type is given (a tombstone keeps only its type). */
export interface FactCounts {
  current: number;
  repeated: number;
  replaced: number;
  erased: number | null;
  evicted: number | null;
}

/** A page of current facts, newest first by valid time, with what became of them. */
export interface FactPage extends Page<Entry> {
  counts: FactCounts;
}

export interface ReviewItem {
  entry: Entry;
  source: Entry | null;
}

export interface Timeline {
  bucket: "hour" | "day" | "week";
  clock: "recorded" | "valid";
  starts: string[];
  counts: Partial<Record<EntryType, number[]>>;
}

export interface SubjectReceipt {
  action: "forget" | "erase";
  user_id: string;
  dry_run: boolean;
  count: number;
  entries: number;
  cascade: number;
  /** Apply with this token to change exactly what the dry run listed. */
  token: string;
  memories: {
    memory_id: string;
    name: string;
    tenant_id: string;
    entries: number[];
    cascade: number[];
    items: { message_id: number; user_id: string; why: string; origin: string }[];
  }[];
  refused: { memory_id: string; name: string; held: number; reason: string }[];
  at: string;
  actor: string;
  reason: string;
}

export interface LoggedRequest {
  id: string;
  at: string;
  channel: string;
  route: string;
  status: number;
  latency_ms: number;
  key_id: string;
  user_id: string;
  memory_ids: string[];
  entry_ids: number[];
  query: string | null;
}

export interface EntryReads {
  message_id: number;
  count: number;
  returned: number;
  named: number;
  use_count: number;
  last_at: string | null;
  by_key: { key_id: string; user_id: string; count: number; last_at: string }[];
}

/** An end user, agent or session of the memories the key may read. */
export interface Person {
  kind: "user" | "agent" | "session";
  id: string;
  facts: number;
  turns: number;
  entries: number;
  last_at: string | null;
}

/** One record of a memory's JSONL export. */
export type ExportRecord = Record<string, unknown>;
