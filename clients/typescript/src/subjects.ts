/**
 * The data-subject listing (the web's People page): the end users, agents or sessions of the
 * memories the key may read, with their counts and last activity (the Python SDK's
 * `list_subjects` in `recallery.client.subjects`). `people` is its old name, kept one release.
 */
import { type Call, type RequestOptions, split } from "./call.js";
import type { Page, Person, SubjectsQuery } from "./types.js";

export type SubjectKind = NonNullable<SubjectsQuery["kind"]>;
/** @deprecated The old name of `SubjectKind`. */
export type PersonKind = SubjectKind;

export interface SubjectsOptions {
  /** Only ids containing this text, any case. */
  keywords?: string | null;
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
}
/** @deprecated The old name of `SubjectsOptions`. */
export type PeopleOptions = SubjectsOptions;

/** The users (`kind` "user", the default), agents or sessions of the memories the key may
 * read, newest activity first. */
export function listSubjects(
  kind: SubjectKind = "user",
  options?: SubjectsOptions & RequestOptions,
): Call<Page<Person>> {
  const [o, request] = split(options);
  const query = { kind, keywords: o.keywords, page: o.page ?? 1, page_size: o.page_size ?? 30 };
  const parse = (d: { subjects: Person[]; total_count: number }) => ({
    items: d.subjects,
    total: d.total_count,
  });
  return { method: "GET", path: "/subjects", parse, query, options: request };
}

/** @deprecated `listSubjects`' old name, kept one release (it sends the same call). */
export function people(
  kind: SubjectKind = "user",
  options?: SubjectsOptions & RequestOptions,
): Call<Page<Person>> {
  return listSubjects(kind, options);
}
