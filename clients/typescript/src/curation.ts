/**
 * The curation operations: bulk changes with a dry run, the review queue, the Facts listing,
 * entries over time
 * (the Python SDK's `recallery.client.curation`), and data-subject requests
 * (`recallery.client.subjects`).
 */
import { type Call, type QueryValue, type RequestOptions, same, seg, split } from "./call.js";
import type {
  BulkAction,
  BulkResult,
  Entry,
  FactCounts,
  FactPage,
  FactsQuery,
  MessageFilter,
  Page,
  ReviewItem,
  SubjectReceipt,
  Timeline,
  TimelineQuery,
} from "./types.js";

export interface BulkOptions {
  message_ids?: readonly number[];
  /** Every raw turn this selects, in the Messages list's parameter names. */
  filter?: MessageFilter;
  /** Default true: only say what applying would change. */
  dry_run?: boolean;
  /** Default "". */
  reason?: string;
  /** A dry run's token: change exactly what it found, or nothing (a Conflict). */
  token?: string;
}

/** Disable, enable, forget, restore, confirm, reject or erase the entries `message_ids` names,
 * or every raw turn `filter` selects; a dry run (the default) says what applying would change. */
export function bulk(
  memory_id: string,
  action: BulkAction,
  options?: BulkOptions & RequestOptions,
): Call<BulkResult> {
  const [o, request] = split(options);
  const json: Record<string, unknown> = {
    action,
    dry_run: o.dry_run ?? true,
    reason: o.reason ?? "",
  };
  if (o.token !== undefined) json["token"] = o.token;
  if (o.message_ids !== undefined) json["message_ids"] = [...o.message_ids];
  if (o.filter !== undefined) json["filter"] = o.filter;
  const path = `/memories/${seg(memory_id)}/bulk`;
  return { method: "POST", path, parse: same<BulkResult>, json, options: request };
}

/** Extracted entries nobody has reviewed, oldest first, each with its source turn. */
export function reviewQueue(
  memory_id: string,
  options?: { page?: number; page_size?: number } & RequestOptions,
): Call<Page<ReviewItem>> {
  const [o, request] = split(options);
  const query = { page: o.page ?? 1, page_size: o.page_size ?? 30 };
  const parse = (d: { items: ReviewItem[]; total_count: number }) => ({
    items: d.items,
    total: d.total_count,
  });
  return { method: "GET", path: `/memories/${seg(memory_id)}/review`, parse, query, options: request };
}

/** The Facts listing's filters (`recallery.FactFilter`, by its SDK keyword). */
export interface FactsOptions {
  /** Only facts of these extracted types. */
  types?: NonNullable<FactsQuery["message_type"]>[number] | readonly NonNullable<FactsQuery["message_type"]>[number][];
  trust?: NonNullable<FactsQuery["trust"]>[number] | readonly NonNullable<FactsQuery["trust"]>[number][];
  /** Enabled (true) or disabled (false) facts. */
  status?: boolean;
  /** Forgotten (true) or not forgotten (false) facts. */
  forgotten?: boolean;
  /** Facts of this user (exact). */
  user_id?: string;
  /** Facts whose text contains this, any case. */
  text?: string;
  /** Default 1. */
  page?: number;
  /** Default 50. */
  page_size?: number;
}

/** The memory's current facts (extracted entries), newest first by valid time, with what became
 * of the facts the filters select. */
export function facts(memory_id: string, options?: FactsOptions & RequestOptions): Call<FactPage> {
  const [o, request] = split(options);
  const query: Record<string, QueryValue> = {
    page: o.page ?? 1,
    page_size: o.page_size ?? 50,
    message_type: o.types,
    trust: o.trust,
    status: o.status,
    forgotten: o.forgotten,
    user_id: o.user_id,
    text: o.text,
  };
  const parse = (d: { items: Entry[]; total_count: number; counts: FactCounts }) => ({
    items: d.items,
    total: d.total_count,
    counts: d.counts,
  });
  return { method: "GET", path: `/memories/${seg(memory_id)}/facts`, parse, query, options: request };
}

export interface TimelineOptions {
  /** hour, day (default) or week. */
  bucket?: NonNullable<TimelineQuery["bucket"]>;
  /** Default 30. */
  buckets?: number;
  /** recorded (default) or valid. */
  clock?: NonNullable<TimelineQuery["clock"]>;
}

/** Entries the memory holds per type, by the bucket in which they were recorded or became valid. */
export function timeline(memory_id: string, options?: TimelineOptions & RequestOptions): Call<Timeline> {
  const [o, request] = split(options);
  const query = { bucket: o.bucket ?? "day", buckets: o.buckets ?? 30, clock: o.clock ?? "recorded" };
  const path = `/memories/${seg(memory_id)}/timeline`;
  return { method: "GET", path, parse: same<Timeline>, query, options: request };
}

export interface SubjectOptions {
  /** Default true: only list what applying would change. */
  dry_run?: boolean;
  /** Default "". */
  reason?: string;
  /** The dry run's token: change exactly what it listed, or nothing (a Conflict). */
  token?: string | null;
  /** An administrator's request over every tenant's memories (default false). */
  everywhere?: boolean;
}

function subject(
  action: "forget" | "erase",
  user_id: string,
  options: (SubjectOptions & RequestOptions) | undefined,
): Call<SubjectReceipt> {
  const [o, request] = split(options);
  const json: Record<string, unknown> = { dry_run: o.dry_run ?? true, reason: o.reason ?? "" };
  if (o.token != null) json["token"] = o.token;
  if (o.everywhere) json["everywhere"] = true;
  const path = `/subjects/${seg(user_id)}/${action}`;
  return { method: "POST", path, parse: same<SubjectReceipt>, json, options: request };
}

/** Forget every entry of `user_id` (their turns, what was extracted from them, their older
 * versions) in each memory the key may read and write; a dry run (the default) lists them,
 * each with its user and why. */
export function forgetSubject(user_id: string, options?: SubjectOptions & RequestOptions): Call<SubjectReceipt> {
  return subject("forget", user_id, options);
}

/** Erase every entry of `user_id` with their versions and extracts in each memory the key may
 * read and erase; a dry run (the default) lists them. Applying cannot be undone. */
export function eraseSubject(user_id: string, options?: SubjectOptions & RequestOptions): Call<SubjectReceipt> {
  return subject("erase", user_id, options);
}
