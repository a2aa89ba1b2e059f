/** The client covers every route the Python SDK covers, by the same names, and sends what the
 * Python SDK sends when given only the required arguments (its defaults); every route it calls
 * is one the server publishes. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, OPERATIONS } from "recallery";

import { SERVER_URL, pythonSdk, recordingFetch } from "./support.js";

const M = "{memory_id}";
const E = "{message_id}" as unknown as number;
const U = "{user_id}";
const K = "{key_id}";
const T = "{tenant_id}";

/** Each operation called with the Python script's placeholders (scripts/python_sdk.py). */
const SAMPLES: Record<keyof typeof OPERATIONS, ((c: Client) => Promise<unknown>)[]> = {
  createMemory: [(c) => c.createMemory("x", [], "x", "x")],
  listMemories: [(c) => c.listMemories()],
  getMemory: [(c) => c.getMemory(M)],
  updateMemory: [(c) => c.updateMemory(M, {})],
  deleteMemory: [(c) => c.deleteMemory(M)],
  listMessages: [(c) => c.listMessages(M)],
  jobs: [(c) => c.jobs(M)],
  retryExtraction: [(c) => c.retryExtraction(M, E)],
  retryFailedExtraction: [(c) => c.retryFailedExtraction(M)],
  testChatModel: [(c) => c.testChatModel(M)],
  exportMemory: [(c) => c.exportMemory(M)],
  importMemory: [(c) => c.importMemory(M, ""), (c) => c.importMemory(null, "")],
  addTurn: [(c) => c.addTurn([M], { user_input: "x", agent_response: "x" })],
  search: [(c) => c.search("x", [M])],
  context: [(c) => c.context("x", [M])],
  recent: [(c) => c.recent([M])],
  getEntry: [(c) => c.getEntry(M, E)],
  setStatus: [(c) => c.setStatus(M, E, true)],
  forget: [(c) => c.forget(M, E)],
  restore: [(c) => c.restore(M, E)],
  review: [(c) => c.review(M, E, "x" as "confirmed")],
  correct: [(c) => c.correct(M, E, "x")],
  reinstate: [(c) => c.reinstate(M, E, "x")],
  erase: [(c) => c.erase(M, E)],
  history: [(c) => c.history(M, E)],
  evidence: [(c) => c.evidence(M, E)],
  auditLog: [(c) => c.auditLog()],
  health: [(c) => c.health()],
  me: [(c) => c.me()],
  createUser: [(c) => c.createUser("x")],
  listUsers: [(c) => c.listUsers()],
  createApiKey: [(c) => c.createApiKey(U)],
  listApiKeys: [(c) => c.listApiKeys(U)],
  revokeApiKey: [(c) => c.revokeApiKey(U, K)],
  joinTeam: [(c) => c.joinTeam(T, U)],
  teamMembers: [(c) => c.teamMembers(T)],
  leaveTeam: [(c) => c.leaveTeam(T, U)],
  bulk: [(c) => c.bulk(M, "x" as "forget")],
  reviewQueue: [(c) => c.reviewQueue(M)],
  facts: [(c) => c.facts(M)],
  timeline: [(c) => c.timeline(M)],
  forgetSubject: [(c) => c.forgetSubject(U)],
  eraseSubject: [(c) => c.eraseSubject(U)],
  listSubjects: [(c) => c.listSubjects()],
  people: [(c) => c.people()],
  requestLog: [(c) => c.requestLog()],
  requests: [(c) => c.requests()],
  entryReads: [(c) => c.entryReads(M, E)],
  addEntries: [(c) => c.addEntries(M, [])],
  taskStatus: [(c) => c.taskStatus(M, E)],
};

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

interface Sent {
  method: string;
  path: string;
  query: Record<string, string[]>;
  json: unknown;
  content: string | null;
}

/** What the client sends for each sample of an operation. */
async function sentBy(name: keyof typeof OPERATIONS): Promise<Sent[]> {
  const { sent, fetch } = recordingFetch();
  const c = new Client("http://recallery.test", { fetch });
  for (const sample of SAMPLES[name]) await sample(c).catch(() => undefined);
  return sent.map(({ url, init }) => {
    const query: Record<string, string[]> = {};
    for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
    const headers = (init.headers ?? {}) as Record<string, string>;
    const body = init.body === undefined ? null : String(init.body);
    const isJson = headers["Content-Type"] === "application/json";
    return {
      method: init.method ?? "GET",
      path: decodeURIComponent(url.pathname).replace(/^\/api\/v1/, ""),
      query,
      json: isJson && body !== null ? JSON.parse(body) : null,
      content: isJson ? null : body,
    };
  });
}

test("the client has an operation for each of the Python SDK's, named alike", () => {
  const python = pythonSdk().operations.map(camel).sort();
  assert.deepEqual(Object.keys(OPERATIONS).sort(), python);
  assert.deepEqual(Object.keys(SAMPLES).sort(), python);
});

test("each operation calls the Python SDK's route and sends its defaults", async () => {
  const python = pythonSdk();
  for (const [name, calls] of Object.entries(python.calls)) {
    const sent = await sentBy(camel(name) as keyof typeof OPERATIONS);
    assert.deepEqual(sent, calls, `${name}: the client sends what the Python SDK sends`);
  }
});

test("the routes the client covers are those the Python SDK covers, and the server serves them", async () => {
  const routes = (sent: { method: string; path: string }[]) =>
    [...new Set(sent.map((s) => `${s.method} ${s.path}`))].sort();
  const python = routes(Object.values(pythonSdk().calls).flat());
  const ours = routes((await Promise.all(Object.keys(SAMPLES).map((n) => sentBy(n as never)))).flat());
  assert.deepEqual(ours, python);
  const published = (await (await fetch(`${SERVER_URL}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const served = new Set(
    Object.entries(published.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path.replace(/^\/api\/v1/, "")}`),
    ),
  );
  assert.deepEqual(ours.filter((route) => !served.has(route)), []);
});
