/**
 * The People listing: the end users, agents or sessions of the memories the key may read, with
 * their counts and last activity (the Python SDK's `recallery.client.roster`).
 */
import { type Call, type RequestOptions, split } from "./call.js";
import type { Page, PeopleQuery, Person } from "./types.js";

export type PersonKind = NonNullable<PeopleQuery["kind"]>;

export interface PeopleOptions {
  /** Only ids containing this text, any case. */
  keywords?: string | null;
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
}

/** The users (`kind` "user", the default), agents or sessions of the memories the key may
 * read, newest activity first. */
export function people(
  kind: PersonKind = "user",
  options?: PeopleOptions & RequestOptions,
): Call<Page<Person>> {
  const [o, request] = split(options);
  const query = { kind, keywords: o.keywords, page: o.page ?? 1, page_size: o.page_size ?? 30 };
  const parse = (d: { people: Person[]; total_count: number }) => ({
    items: d.people,
    total: d.total_count,
  });
  return { method: "GET", path: "/people", parse, query, options: request };
}
