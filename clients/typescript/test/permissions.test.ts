/** What a key may not do, it may not do through the client: a read-only key is refused on a
 * write, a scoped key on another memory, and another memory's data never comes back. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Forbidden, NotFound, RecalleryError } from "recallery";

import { admin, freshMemory, userWithKey } from "./support.js";

test("a read-only key reads but is refused on writes, with the reason", async () => {
  const reader = await userWithKey(["read"]);
  const memory = await freshMemory(reader.client).catch((e: unknown) => e);
  assert.ok(memory instanceof Forbidden, "creating a memory needs more than read");

  const shared = await freshMemory();
  await admin.updateMemory(shared.id, { permissions: "team" });
  await admin.joinTeam(shared.tenant_id, reader.user_id);
  await admin.addTurn([shared.id], { user_input: "The launch is on Friday.", agent_response: "OK.", user_id: "u-anna" });
  assert.equal((await reader.client.search("launch", [shared.id])).length, 1);

  const refused = await reader.client
    .addTurn([shared.id], { user_input: "Cancel the launch.", agent_response: "Done.", user_id: "u-anna" })
    .catch((e: unknown) => e);
  assert.ok(refused instanceof Forbidden, `a read-only key may not write: ${String(refused)}`);
  assert.equal(refused.code, 403);
  assert.equal(refused.status, 403);
  assert.ok(refused.message.length > 0);
  await assert.rejects(reader.client.addEntries(shared.id, ["The launch is cancelled"]), Forbidden);
  const turns = await admin.listMessages(shared.id);
  assert.equal(turns.total, 1, "nothing was written");
  assert.doesNotMatch(turns.items[0]?.content ?? "", /Cancel/);
});

test("a key scoped to one memory cannot see or change another", async () => {
  const owner = await userWithKey();
  const allowed = await freshMemory(owner.client);
  const hidden = await freshMemory(owner.client);
  await owner.client.addTurn([allowed.id], { user_input: "Anna likes jazz.", agent_response: "Nice.", user_id: "u-anna" });
  await owner.client.addTurn([hidden.id], { user_input: "Anna's PIN is 4711.", agent_response: "Stored.", user_id: "u-anna" });
  const [, key] = await admin.createApiKey(owner.user_id, { scope: [allowed.id], capabilities: ["read", "write"] });
  const scoped = (await import("./support.js")).client(key);

  const listed = await scoped.listMemories();
  assert.deepEqual(listed.items.map((m) => m.id), [allowed.id]);
  const hits = await scoped.search("Anna", [allowed.id], { user_id: "u-anna" });
  assert.ok(hits.length >= 1 && hits.every((h) => h.memory_id === allowed.id));
  assert.ok(!hits.some((h) => h.content.includes("4711")));

  // A search over a memory the key cannot read finds nothing (as RAGFlow answers it).
  assert.deepEqual(await scoped.search("PIN", [hidden.id]), []);
  assert.equal((await scoped.context("PIN", [hidden.id, allowed.id])).text.includes("4711"), false);
  for (const attempt of [
    () => scoped.addTurn([hidden.id], { user_input: "overwrite", agent_response: "ok" }),
    () => scoped.getMemory(hidden.id),
    () => scoped.listMessages(hidden.id),
    () => scoped.exportMemory(hidden.id),
  ]) {
    const error = await attempt().catch((e: unknown) => e);
    assert.ok(error instanceof NotFound || error instanceof Forbidden, String(error));
    assert.ok(error instanceof RecalleryError && !error.message.includes("4711"));
  }
  assert.equal((await owner.client.listMessages(hidden.id)).total, 1, "the other memory is unchanged");
});
