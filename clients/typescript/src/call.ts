/**
 * A call: one request of the REST API and how to read its answer, built by the operations
 * (`memories.ts`, `messages.ts`, `accounts.ts`...) and sent by the client, as in the Python
 * SDK's `recallery.client.call`. Also how values travel in a query string.
 */

/** What every operation takes last besides its own options: cancellation and a timeout. */
export interface RequestOptions {
  /** Cancels the request (and a wait before a retry) when it aborts. */
  signal?: AbortSignal;
  /** Seconds this request may take (default: the client's `timeout`). */
  timeout?: number;
}

/** A time as the server reads it: an ISO 8601 text or a `Date`. */
export type Time = string | Date;

type Scalar = string | number | boolean | Date;
/** A query value: null and undefined are left out; an array repeats the parameter. */
export type QueryValue = Scalar | readonly Scalar[] | null | undefined;

/** One request and how to turn its envelope's `data` into a result. */
export interface Call<T> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  parse: (data: any) => T;
  query?: Record<string, QueryValue>;
  json?: unknown;
  /** A text body (JSONL), sent as it is. */
  content?: string;
  headers?: Record<string, string>;
  /** The body is the result itself (JSONL), not an envelope. */
  raw?: boolean;
  options?: RequestOptions;
}

/** A path segment, escaped. */
export function seg(value: string | number): string {
  return encodeURIComponent(String(value));
}

/** A value as the wire carries it: a `Date` as ISO 8601, anything else as it is. */
export function wireTime<T>(value: T | Date): T | string {
  return value instanceof Date ? value.toISOString() : value;
}

/** The query string of a call's parameters (with its `?`), or "" when there are none. */
export function queryString(values: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value === null || value === undefined) continue;
    const items: readonly Scalar[] = Array.isArray(value) ? value : [value as Scalar];
    for (const item of items) params.append(key, String(wireTime(item)));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A list as one comma-separated text (how the search route's query string takes them). */
export function joined(value: readonly string[] | string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === "string" ? value : value.join(",");
}

/** Split a call's own options from the request options every operation takes. */
export function split<O extends object>(
  options: (O & RequestOptions) | undefined,
): [Omit<O, keyof RequestOptions>, RequestOptions] {
  const { signal, timeout, ...rest } = (options ?? {}) as O & RequestOptions;
  const request: RequestOptions = {};
  if (signal !== undefined) request.signal = signal;
  if (timeout !== undefined) request.timeout = timeout;
  return [rest as Omit<O, keyof RequestOptions>, request];
}

/** Fields whose value is undefined, left out (the server then applies its default). */
export function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}

export const nothing = (): void => undefined;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const same = <T>(data: any): T => data as T;
