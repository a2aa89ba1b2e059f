/**
 * The client's one error tree: the exception the Python SDK raises for an error envelope, by
 * the same names and the same mapping (`recallery.wire.envelope.error_from_envelope`).
 *
 * Every error carries the envelope's RAGFlow `code` (101, 401, 403, 404, 409, 102, 429, 500...)
 * and `message`, the HTTP `status`, and the envelope's `data.error` as `kind` (Python's
 * `RecalleryError.code`: `not_found`, `forbidden`...). Network failures stay `fetch`'s own
 * errors; a timeout rejects with a `TimeoutError` and a cancellation with the signal's reason.
 */

/** What an error envelope carries besides its message. */
export interface ErrorDetail {
  /** The envelope's RAGFlow code (`code`). */
  code: number;
  /** The HTTP status of the answer. */
  status: number;
  /** The envelope's `data.error`, when it names one. */
  kind?: string;
  /** The envelope's `data`, as sent. */
  data?: unknown;
}

/** Base of every error recallery answers with. */
export class RecalleryError extends Error {
  /** Python's `RecalleryError.code` for this class: the `data.error` it stands for. */
  static readonly kind: string = "error";
  /** The envelope's RAGFlow code (0 never: that is success). */
  readonly code: number;
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The envelope's `data.error` (`not_found`, `forbidden`...), or the class's own kind. */
  readonly kind: string;
  /** The envelope's `data`, as sent. */
  readonly data: unknown;

  constructor(message: string, detail: Partial<ErrorDetail> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = detail.code ?? 100;
    this.status = detail.status ?? 0;
    this.kind = detail.kind ?? (new.target as typeof RecalleryError).kind;
    this.data = detail.data ?? null;
  }
}

/** A field of a request is missing or out of range; `field` names it (code 101). */
export class InvalidInput extends RecalleryError {
  static override readonly kind = "invalid_input";
  readonly field: string;

  constructor(field: string, message: string, detail: Partial<ErrorDetail> = {}) {
    super(message, detail);
    this.field = field;
  }
}

/** The thing does not exist, or the caller may not know that it does (code 404). */
export class NotFound extends RecalleryError {
  static override readonly kind = "not_found";
}

/** The caller is known but may not do this; the message says why (code 403). */
export class Forbidden extends RecalleryError {
  static override readonly kind = "forbidden";
}

/** No valid credentials (code 401). */
export class Unauthorized extends RecalleryError {
  static override readonly kind = "unauthorized";
}

/** Too many failed authentications from this address; try again after `retry_after` seconds
 * (code 429, after the client's own retries). */
export class Throttled extends RecalleryError {
  static override readonly kind = "throttled";
  readonly retry_after: number;

  constructor(message: string, retry_after = 60, detail: Partial<ErrorDetail> = {}) {
    super(message, detail);
    this.retry_after = retry_after;
  }
}

/** The request contradicts the current state, for example a locked field (code 409). */
export class Conflict extends RecalleryError {
  static override readonly kind = "conflict";
}

/** A write would exceed the memory's budget and its policy cannot make room (code 102). */
export class CapacityExceeded extends RecalleryError {
  static override readonly kind = "capacity_exceeded";
}

/** An embedding or chat model cannot be loaded or called (code 500, HTTP 502). */
export class ModelError extends RecalleryError {
  static override readonly kind = "model_error";
}

/** The store failed in a way the caller cannot fix by changing the request (code 500). */
export class StoreError extends RecalleryError {
  static override readonly kind = "store_error";
}

type ErrorClass = typeof RecalleryError;

/** The mapping of `recallery.wire.envelope.ERROR_CODES`, most specific first: a class, its
 * HTTP status and its RAGFlow code. */
export const ERROR_CODES: ReadonlyArray<readonly [ErrorClass, number, number]> = [
  [InvalidInput as unknown as ErrorClass, 400, 101],
  [Unauthorized, 401, 401],
  [Forbidden, 403, 403],
  [NotFound, 404, 404],
  [Conflict, 409, 409],
  [Throttled as unknown as ErrorClass, 429, 429],
  [CapacityExceeded, 409, 102],
  [ModelError, 502, 500],
  [StoreError, 500, 500],
  [RecalleryError, 500, 500],
];

const BY_KIND = new Map(ERROR_CODES.map(([cls]) => [cls.kind, cls]));
// The first class listed for a code wins, as in Python's `reversed` dictionary.
const BY_CODE = new Map([...ERROR_CODES].reverse().map(([cls, , code]) => [code, cls]));

/** Seconds a `Retry-After` header asks to wait (seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The error an error envelope stands for (what the Python SDK raises for it). */
export function errorFromEnvelope(
  body: Record<string, unknown>,
  status: number,
  retryAfter?: number,
): RecalleryError {
  const data = body["data"];
  const detail = data !== null && typeof data === "object" ? (data as Record<string, unknown>) : {};
  const message = String(body["message"] ?? "");
  const kind = typeof detail["error"] === "string" ? detail["error"] : undefined;
  const code = typeof body["code"] === "number" ? body["code"] : 100;
  let cls: ErrorClass =
    (kind !== undefined ? BY_KIND.get(kind) : undefined) ?? BY_CODE.get(code) ?? RecalleryError;
  if (status === 401) cls = Unauthorized;
  const carried: Partial<ErrorDetail> = { code, status, data };
  if (kind !== undefined) carried.kind = kind;
  if (cls === (InvalidInput as unknown)) {
    return new InvalidInput(String(detail["field"] ?? ""), message, carried);
  }
  if (cls === (Throttled as unknown)) return new Throttled(message, retryAfter ?? 60, carried);
  return new cls(message, carried);
}
