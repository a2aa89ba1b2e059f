/**
 * The account operations: the audit log, health, the caller, users, keys and teams (the
 * Python SDK's `recallery.client.accounts`).
 */
import { type Call, type RequestOptions, type Time, nothing, same, seg, split } from "./call.js";
import type { ApiKey, AuditEvent, Capability, Page, Principal, User } from "./types.js";

export interface AuditLogOptions {
  memory_id?: string;
  message_id?: number;
  actor_id?: string;
  action?: string;
  since?: Time;
  until?: Time;
  /** Default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
}

export function auditLog(options?: AuditLogOptions & RequestOptions): Call<Page<AuditEvent>> {
  const [o, request] = split(options);
  const query = {
    memory_id: o.memory_id,
    message_id: o.message_id,
    actor: o.actor_id,
    action: o.action,
    since: o.since,
    until: o.until,
    page: o.page ?? 1,
    page_size: o.page_size ?? 30,
  };
  const parse = (d: { events: AuditEvent[]; total_count: number }) => ({
    items: d.events,
    total: d.total_count,
  });
  return { method: "GET", path: "/audit", parse, query, options: request };
}

export function health(options?: RequestOptions): Call<Record<string, unknown>> {
  return { method: "GET", path: "/health", parse: same<Record<string, unknown>>, options: split(options)[1] };
}

/** The caller: user, teams, the key's scope and capabilities. */
export function me(options?: RequestOptions): Call<Principal> {
  return { method: "GET", path: "/users/me", parse: same<Principal>, options: split(options)[1] };
}

export function createUser(name: string, options?: { admin?: boolean } & RequestOptions): Call<User> {
  const [o, request] = split(options);
  const json = { name, is_admin: o.admin ?? false };
  return { method: "POST", path: "/users", parse: same<User>, json, options: request };
}

export function listUsers(options?: RequestOptions): Call<User[]> {
  return { method: "GET", path: "/users", parse: same<User[]>, options: split(options)[1] };
}

export interface CreateApiKeyOptions {
  /** Default "". */
  name?: string;
  /** Memory ids the key is limited to (default: no limit). */
  scope?: readonly string[] | null;
  /** Any of `read`, `write`, `manage` (default: all). */
  capabilities?: readonly Capability[] | null;
}

/** A new key for `user_id`: its record and the key itself (shown only this once). */
export function createApiKey(
  user_id: string,
  options?: CreateApiKeyOptions & RequestOptions,
): Call<[ApiKey, string]> {
  const [o, request] = split(options);
  const json = {
    name: o.name ?? "",
    scope: o.scope == null ? null : [...o.scope],
    capabilities: o.capabilities == null ? null : [...o.capabilities],
  };
  const parse = ({ key, ...record }: ApiKey & { key: string }): [ApiKey, string] => [record, key];
  return { method: "POST", path: `/users/${seg(user_id)}/keys`, parse, json, options: request };
}

export function listApiKeys(user_id: string, options?: RequestOptions): Call<ApiKey[]> {
  const path = `/users/${seg(user_id)}/keys`;
  return { method: "GET", path, parse: same<ApiKey[]>, options: split(options)[1] };
}

export function revokeApiKey(user_id: string, key_id: string, options?: RequestOptions): Call<void> {
  const path = `/users/${seg(user_id)}/keys/${seg(key_id)}`;
  return { method: "DELETE", path, parse: nothing, options: split(options)[1] };
}

export function joinTeam(tenant_id: string, user_id: string, options?: RequestOptions): Call<void> {
  const path = `/teams/${seg(tenant_id)}/members`;
  return { method: "POST", path, parse: nothing, json: { user_id }, options: split(options)[1] };
}

export function teamMembers(tenant_id: string, options?: RequestOptions): Call<string[]> {
  const parse = (d: { members: string[] }) => d.members;
  return { method: "GET", path: `/teams/${seg(tenant_id)}/members`, parse, options: split(options)[1] };
}

export function leaveTeam(tenant_id: string, user_id: string, options?: RequestOptions): Call<void> {
  const path = `/teams/${seg(tenant_id)}/members/${seg(user_id)}`;
  return { method: "DELETE", path, parse: nothing, options: split(options)[1] };
}
