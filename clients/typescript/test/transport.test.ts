/** How the client sends and reads, with a `fetch` of the test's own: errors by the Python
 * SDK's mapping, warnings, 429 retries after Retry-After, timeouts and cancellation. */
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Client,
  InvalidInput,
  NotFound,
  RecalleryError,
  Throttled,
  Unauthorized,
  errorFromEnvelope,
} from "recallery";

import { failure, ok, pythonSdk, recordingFetch } from "./support.js";

const M = "0123456789abcdef0123456789abcdef";

test("every error envelope becomes the class the Python SDK raises for it", () => {
  for (const { kind, code, status, class: expected } of pythonSdk().errors) {
    const body = { code, message: "m", data: kind === null ? null : { error: kind } };
    const error = errorFromEnvelope(body, status);
    assert.equal(error.name, expected, `${JSON.stringify(body)} answered with ${status}`);
    assert.ok(error instanceof RecalleryError);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
  }
});

test("an error carries the envelope's code, message, kind and field", async () => {
  const { fetch } = recordingFetch(() =>
    failure(400, 101, "top_n must be at most 100.", { error: "invalid_input", field: "top_n" }),
  );
  const error = await new Client("http://x.test", { fetch }).search("q", [M]).catch((e) => e);
  assert.ok(error instanceof InvalidInput);
  assert.deepEqual(
    [error.code, error.status, error.kind, error.field, error.message],
    [101, 400, "invalid_input", "top_n", "top_n must be at most 100."],
  );
});

test("an answer that is not an envelope is a RecalleryError naming the status", async () => {
  const { fetch } = recordingFetch(() => new Response("<html>bad gateway</html>", { status: 502 }));
  const error = await new Client("http://x.test", { fetch }).me().catch((e) => e);
  assert.ok(error instanceof RecalleryError);
  assert.match(error.message, /HTTP 502 from http:\/\/x\.test\/api\/v1\/users\/me: not a recallery answer/);
});

test("data.warnings go to on_warning and stay in the result", async () => {
  const warned: string[] = [];
  const { fetch } = recordingFetch(() => ok({ id: M, warnings: ["llm_id: not configured"] }));
  const client = new Client("http://x.test", { fetch, on_warning: (m) => warned.push(m) });
  const memory = await client.createMemory("notes", ["raw"], "e@Builtin", "m@OpenAI");
  assert.deepEqual(warned, ["llm_id: not configured"]);
  assert.deepEqual(memory.warnings, ["llm_id: not configured"]);
});

test("a write's warnings beside its list of turns go to on_warning too", async () => {
  const warned: string[] = [];
  const turn = { message_id: 1, memory_id: M, message_type: "raw", content: "我住在巴伦西亚" };
  const body = { code: 0, message: true, data: [turn], warnings: ["content: Han text, English-only model"] };
  const { fetch } = recordingFetch(
    () => new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } }),
  );
  const client = new Client("http://x.test", { fetch, on_warning: (m) => warned.push(m) });
  await client.addTurn([M], { user_input: "我住在巴伦西亚", agent_response: "好的" });
  assert.deepEqual(warned, ["content: Han text, English-only model"]);
});

test("the key is sent as a bearer token, and only when given", async () => {
  const { sent, fetch } = recordingFetch(() => ok({}));
  await new Client("http://x.test/", { fetch, api_key: "rc-secret" }).health();
  await new Client("http://x.test", { fetch }).health();
  const auth = sent.map((s) => (s.init.headers as Record<string, string>)["Authorization"]);
  assert.deepEqual(auth, ["Bearer rc-secret", undefined]);
  assert.equal(sent[0]?.url.href, "http://x.test/api/v1/health");
});

test("a 429 is retried after its Retry-After, then answered", async () => {
  let calls = 0;
  const { sent, fetch } = recordingFetch(() =>
    ++calls === 1 ? failure(429, 429, "Too many failed authentications.", null, { "Retry-After": "1" }) : ok({}),
  );
  const started = Date.now();
  await new Client("http://x.test", { fetch }).health();
  const waited = Date.now() - started;
  assert.equal(sent.length, 2);
  assert.ok(waited >= 950 && waited < 3000, `waited ${waited} ms for Retry-After: 1`);
});

test("a 429 past max_retries, or asking too long a wait, is Throttled with its retry_after", async () => {
  const answer = (after: string) => () =>
    failure(429, 429, "Too many failed authentications.", { error: "throttled" }, { "Retry-After": after });
  const quick = recordingFetch(answer("0"));
  const error = await new Client("http://x.test", { fetch: quick.fetch, max_retries: 2 }).me().catch((e) => e);
  assert.ok(error instanceof Throttled);
  assert.equal(quick.sent.length, 3);
  assert.equal(error.retry_after, 0);
  const slow = recordingFetch(answer("120"));
  const long = await new Client("http://x.test", { fetch: slow.fetch }).me().catch((e) => e);
  assert.ok(long instanceof Throttled);
  assert.equal(long.retry_after, 120);
  assert.equal(slow.sent.length, 1, "a wait over max_retry_wait is not waited for");
});

/** A fetch that answers only when its signal aborts (with the signal's reason). */
const hanging = (async (_input: unknown, init: RequestInit = {}) =>
  new Promise<Response>((_, reject) => {
    init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
  })) as typeof globalThis.fetch;

test("a request that takes longer than its timeout rejects with a TimeoutError", async () => {
  const client = new Client("http://x.test", { fetch: hanging, timeout: 0.05 });
  await assert.rejects(client.me(), { name: "TimeoutError" });
  await assert.rejects(client.me({ timeout: 0.01 }), /within 0.01 s/);
});

test("an aborted signal cancels the request, and the wait before a retry", async () => {
  const controller = new AbortController();
  const pending = new Client("http://x.test", { fetch: hanging }).search("q", [M], {
    signal: controller.signal,
  });
  controller.abort();
  await assert.rejects(pending, { name: "AbortError" });

  const waiting = new AbortController();
  const throttled = recordingFetch(() => failure(429, 429, "slow down", null, { "Retry-After": "30" }));
  const retry = new Client("http://x.test", { fetch: throttled.fetch }).me({ signal: waiting.signal });
  setTimeout(() => waiting.abort(), 20);
  const started = Date.now();
  await assert.rejects(retry, { name: "AbortError" });
  assert.ok(Date.now() - started < 2000);
});

test("a 401 is Unauthorized and a 404 NotFound, as the Python SDK raises them", async () => {
  const { fetch } = recordingFetch((url) =>
    url.pathname.endsWith("/me")
      ? failure(401, 401, "<Unauthorized '401: Unauthorized'>", { error: "unauthorized" })
      : failure(404, 404, "Memory not found.", { error: "not_found" }),
  );
  const client = new Client("http://x.test", { fetch });
  await assert.rejects(client.me(), Unauthorized);
  await assert.rejects(client.getMemory(M), NotFound);
});
