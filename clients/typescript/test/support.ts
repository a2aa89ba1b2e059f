/** What the tests share: the live server `npm test` started, clients for it, fresh memories,
 * and the Python SDK's facts (scripts/python_sdk.py). */
import { readFileSync } from "node:fs";

import { type Capability, Client, type ClientOptions, type Memory } from "recallery";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\``);
  return value;
}

export const SERVER_URL = required("RECALLERY_TEST_URL");
export const ADMIN_KEY = required("RECALLERY_TEST_ADMIN_KEY");
export const EMBEDDER = "all-MiniLM-L6-v2@Builtin";
/** A chat model whose provider is not configured: the memory is accepted with a warning. */
export const UNCONFIGURED_LLM = "gpt-4o-mini@OpenAI";

export interface PythonCall {
  method: string;
  path: string;
  query: Record<string, string[]>;
  json: unknown;
  content: string | null;
}

export interface PythonSdk {
  operations: string[];
  calls: Record<string, PythonCall[]>;
  errors: { kind: string | null; code: number; status: number; class: string }[];
}

export function pythonSdk(): PythonSdk {
  return JSON.parse(readFileSync(required("RECALLERY_TEST_PYTHON_SDK"), "utf8")) as PythonSdk;
}

/** A client of the live server; warnings are collected instead of printed. */
export function client(api_key: string = ADMIN_KEY, options: ClientOptions = {}): Client {
  return new Client(SERVER_URL, { api_key, on_warning: () => undefined, ...options });
}

export const admin = client();

let counter = 0;
/** A name no other test uses. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** A new memory of raw turns (nothing to extract, so no chat model is called). */
export async function freshMemory(owner: Client = admin, name = unique("memory")): Promise<Memory> {
  return owner.createMemory(name, ["raw"], EMBEDDER, UNCONFIGURED_LLM);
}

/** A new user and a key of theirs with these capabilities (and scope). */
export async function userWithKey(
  capabilities: Capability[] = ["read", "write", "manage"],
  scope: string[] | null = null,
): Promise<{ user_id: string; key: string; client: Client }> {
  const user = await admin.createUser(unique("user"));
  const [, key] = await admin.createApiKey(user.id, { name: "test", capabilities, scope });
  return { user_id: user.id, key, client: client(key) };
}

/** A `fetch` that records what it is sent and answers with `answer`. */
export function recordingFetch(answer: (url: URL, init: RequestInit) => Response = () => ok(null)) {
  const sent: { url: URL; init: RequestInit }[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    sent.push({ url, init });
    return answer(url, init);
  };
  return { sent, fetch: fetch as typeof globalThis.fetch };
}

/** A success envelope. */
export function ok(data: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ code: 0, message: true, data }), {
    status: 200,
    headers: { "Content-Type": "application/json", ...headers },
  });
}

/** An error envelope. */
export function failure(
  status: number,
  code: number,
  message: string,
  data: unknown = null,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ code, message, data }), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}
