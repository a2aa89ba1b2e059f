/**
 * The request log: who read what (an administrator: every caller; else the caller's own
 * calls), and an entry's access history (the Python SDK's `recallery.client.requestlog`).
 * `requests` is the log's old name, kept one release.
 */
import { type Call, type RequestOptions, same, seg, split } from "./call.js";
import type { EntryReads, LoggedRequest, Page, RequestsQuery } from "./types.js";

export type RequestsOptions = Omit<RequestsQuery, "page" | "page_size"> & {
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
};

/** Logged requests, newest first, filtered as `GET /admin/requests` filters them. */
export function requestLog(options?: RequestsOptions & RequestOptions): Call<Page<LoggedRequest>> {
  const [o, request] = split(options);
  const query = { ...o, page: o.page ?? 1, page_size: o.page_size ?? 30 };
  const parse = (d: { requests: LoggedRequest[]; total_count: number }) => ({
    items: d.requests,
    total: d.total_count,
  });
  return { method: "GET", path: "/admin/requests", parse, query, options: request };
}

/** @deprecated `requestLog`'s old name, kept one release (it sends the same call). */
export function requests(options?: RequestsOptions & RequestOptions): Call<Page<LoggedRequest>> {
  return requestLog(options);
}

/** How often the entry was read, by which keys, and when last (from the request log). */
export function entryReads(memory_id: string, message_id: number, options?: RequestOptions): Call<EntryReads> {
  const path = `/messages/${seg(memory_id)}:${seg(message_id)}/reads`;
  return { method: "GET", path, parse: same<EntryReads>, options: split(options)[1] };
}
