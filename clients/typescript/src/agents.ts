/**
 * The agent operations: entries stated directly, and a turn's task status (the Python SDK's
 * `recallery.client.agents`).
 */
import { type Call, type RequestOptions, type Time, same, seg, split, wireTime } from "./call.js";
import type { AddedEntries, Job, StatedEntry } from "./types.js";

/** One entry to state: its content, and optionally its type and validity. */
export type EntryInput = Omit<StatedEntry, "valid_at" | "invalid_at"> & {
  valid_at?: Time | null;
  invalid_at?: Time | null;
};

export interface AddEntriesOptions {
  /** Default "". */
  user_id?: string;
  /** Default "". */
  agent_id?: string;
  /** Default "". */
  session_id?: string;
  source_id?: number | null;
}

/** State typed entries directly; each is reconciled (added, a duplicate, superseding an entry,
 * or suppressed by a rejected one) and the result says which. */
export function addEntries(
  memory_id: string,
  entries: readonly (EntryInput | string)[],
  options?: AddEntriesOptions & RequestOptions,
): Call<AddedEntries> {
  const [o, request] = split(options);
  const json = {
    entries: entries.map((e) =>
      typeof e === "string"
        ? { content: e }
        : { ...e, valid_at: wireTime(e.valid_at ?? null), invalid_at: wireTime(e.invalid_at ?? null) },
    ),
    user_id: o.user_id ?? "",
    agent_id: o.agent_id ?? "",
    session_id: o.session_id ?? "",
    source_id: o.source_id ?? null,
  };
  const path = `/memories/${seg(memory_id)}/entries`;
  return { method: "POST", path, parse: same<AddedEntries>, json, options: request };
}

/** The extraction job of a raw turn (null when the memory extracts nothing). */
export function taskStatus(
  memory_id: string,
  message_id: number,
  options?: RequestOptions,
): Call<Job | null> {
  const path = `/messages/${seg(memory_id)}:${seg(message_id)}/task`;
  return { method: "GET", path, parse: (d: Job | null) => d ?? null, options: split(options)[1] };
}
