/** The client against the live server `npm test` started: each family of routes, with two
 * end users in one memory and text in several scripts. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Conflict, InvalidInput, NotFound } from "recallery";

import { EMBEDDER, UNCONFIGURED_LLM, admin, client, freshMemory, unique } from "./support.js";

test("memories: create (with its warning), list, get, update, delete", async () => {
  const warned: string[] = [];
  const ms = client(undefined, { on_warning: (m) => warned.push(m) });
  const name = unique("notes");
  const memory = await ms.createMemory(name, ["raw", "semantic"], EMBEDDER, UNCONFIGURED_LLM, {
    description: "a test memory",
  });
  assert.equal(memory.name, name);
  assert.deepEqual(memory.memory_type, ["raw", "semantic"]);
  assert.equal(warned.length, 1);
  assert.match(warned[0] ?? "", /not configured/);

  const listed = await ms.listMemories({ keywords: name });
  assert.deepEqual(listed.items.map((m) => m.id), [memory.id]);
  assert.equal(listed.total, 1);
  assert.equal((await ms.getMemory(memory.id)).description, "a test memory");
  assert.equal((await ms.updateMemory(memory.id, { description: "renamed" })).description, "renamed");

  await ms.deleteMemory(memory.id);
  await assert.rejects(ms.getMemory(memory.id), NotFound);
});

test("turns and search: each user finds their own, in any script", async () => {
  const memory = await freshMemory();
  const turns = [
    ["u-anna", "I moved to Lyon last spring.", "Noted, Lyon."],
    ["u-boris", "Я живу в Новосибирске и работаю врачом.", "Понял."],
    ["u-chen", "我住在上海，喜欢喝绿茶。", "好的。"],
  ] as const;
  for (const [user_id, user_input, agent_response] of turns) {
    const written = await admin.addTurn([memory.id], { user_input, agent_response, user_id, session_id: `s-${user_id}` });
    assert.equal(written.length, 1);
    assert.equal(written[0]?.user_id, user_id);
  }
  const anna = await admin.search("where does the user live?", [memory.id], { user_id: "u-anna" });
  assert.deepEqual([...new Set(anna.map((h) => h.user_id))], ["u-anna"]);
  assert.match(anna[0]?.content ?? "", /Lyon/);

  const boris = await admin.search("Новосибирск", [memory.id], { user_id: "u-boris", top_n: 3 });
  assert.match(boris[0]?.content ?? "", /Новосибирске/);
  assert.ok(boris.every((h) => h.user_id === "u-boris"));

  const chen = await admin.search("上海 绿茶", [memory.id], { types: ["raw"], fusion: "rrf" });
  assert.ok(chen.some((h) => h.content.includes("上海")));

  const block = await admin.context("Lyon", [memory.id], { user_id: "u-anna", max_tokens: 300 });
  assert.ok(block.message_ids.length >= 1);
  assert.match(block.text, /Lyon/);
  assert.doesNotMatch(block.text, /上海|Новосибирске/);

  const recent = await admin.recent([memory.id], { session_id: "s-u-chen" });
  assert.deepEqual(recent.map((e) => e.user_id), ["u-chen"]);
  const page = await admin.listMessages(memory.id, { user_id: "u-boris" });
  assert.equal(page.total, 1);
  assert.equal(page.items[0]?.user_id, "u-boris");
});

test("an entry's life: status, forget, restore, correct, history, evidence, erase", async () => {
  const memory = await freshMemory();
  const [turn] = await admin.addTurn([memory.id], {
    user_input: "My favourite colour is green.",
    agent_response: "Green it is.",
    user_id: "u-anna",
  });
  const id = turn!.message_id;
  const [entry, vector] = await admin.getEntry(memory.id, id);
  assert.equal(entry.content, turn!.content);
  assert.equal(vector?.length, 384);

  assert.deepEqual(await admin.setStatus(memory.id, id, false), [id]);
  assert.equal((await admin.getEntry(memory.id, id))[0].status, false);
  assert.deepEqual(await admin.setStatus(memory.id, id, true), [id]);
  assert.deepEqual(await admin.forget(memory.id, id), [id]);
  assert.deepEqual(await admin.restore(memory.id, id), [id]);

  const corrected = await admin.correct(memory.id, id, "User Input: My favourite colour is blue.", {
    reason: "the user said so",
  });
  assert.notEqual(corrected.message_id, id);
  const versions = await admin.history(memory.id, corrected.message_id);
  assert.deepEqual(versions.map((v) => v.message_id).sort(), [id, corrected.message_id].sort());
  assert.ok(Array.isArray(await admin.evidence(memory.id, corrected.message_id)));
  const reinstated = await admin.reinstate(memory.id, id, "blue was a typo");
  assert.equal(reinstated.message_id, id);
  assert.ok((await admin.entryReads(memory.id, id)).message_id === id);

  const receipt = await admin.erase(memory.id, id, { reason: "asked to" });
  assert.equal(receipt.memory_id, memory.id);
  assert.ok(receipt.erased.includes(id));
  await assert.rejects(admin.getEntry(memory.id, id), NotFound);
});

test("stated entries, review, bulk with a token, the timeline, facts and the export", async () => {
  const memory = await admin.createMemory(unique("facts"), ["raw", "semantic"], EMBEDDER, UNCONFIGURED_LLM);
  const added = await admin.addEntries(memory.id, ["The user drinks green tea", { content: "The user lives in Lyon" }], {
    user_id: "u-anna",
  });
  assert.deepEqual(added.outcomes.map((o) => o.action), ["add", "add"]);
  const ids = added.outcomes.map((o) => o.message_id!);
  const queue = await admin.reviewQueue(memory.id);
  assert.ok(queue.total >= 0);
  const confirmed = await admin.review(memory.id, ids[0]!, "confirmed", "checked");
  assert.equal(confirmed.trust, "confirmed");

  const dry = await admin.bulk(memory.id, "disable", { message_ids: [ids[1]!] });
  assert.equal(dry.dry_run, true);
  assert.deepEqual(dry.ids, [ids[1]]);
  const applied = await admin.bulk(memory.id, "disable", { message_ids: [ids[1]!], dry_run: false, token: dry.token });
  assert.deepEqual(applied.changed, [ids[1]]);
  await assert.rejects(
    admin.bulk(memory.id, "enable", { message_ids: [ids[1]!], dry_run: false, token: dry.token }),
    (e: unknown) => e instanceof Conflict || e instanceof InvalidInput,
  );

  const timeline = await admin.timeline(memory.id, { bucket: "day", buckets: 2 });
  assert.equal(timeline.starts.length, 2);
  assert.equal(timeline.counts.semantic?.at(-1), 2);

  await admin.addEntries(memory.id, ["Пользователь живёт в Казани"], { user_id: "u-борис" });
  const annas = await admin.facts(memory.id, { user_id: "u-anna" });
  assert.deepEqual(new Set(annas.items.map((e) => e.message_id)), new Set(ids));
  assert.equal(annas.total, 2);
  assert.equal(annas.counts.current, 2); // one of them disabled: still current
  assert.equal(annas.counts.erased, null);
  const boris = await admin.facts(memory.id, { user_id: "u-борис", types: ["semantic"], text: "живёт" });
  assert.deepEqual(boris.items.map((e) => e.user_id), ["u-борис"]);
  await assert.rejects(admin.facts(memory.id, { types: "raw" as "semantic" }), InvalidInput);

  const records = await admin.exportMemory(memory.id);
  assert.equal(records[0]?.["record"], "memory");
  const copy = await admin.importMemory(null, records);
  assert.notEqual(copy.memory_id, memory.id);
});

test("jobs: a turn's task, the job list, retries and the chat model check", async () => {
  const memory = await admin.createMemory(unique("extracting"), ["raw", "semantic"], EMBEDDER, UNCONFIGURED_LLM);
  const [turn] = await admin.addTurn([memory.id], { user_input: "I work as a nurse.", agent_response: "Noted." });
  const job = await admin.taskStatus(memory.id, turn!.message_id);
  assert.equal(job?.message_id, turn!.message_id);
  const page = await admin.jobs(memory.id);
  assert.ok(page.items.some((j) => j.id === job?.id));
  const retried = await admin.retryFailedExtraction(memory.id);
  assert.equal(retried.memory_id, memory.id);
  const check = await admin.testChatModel(memory.id);
  assert.equal(check.ok, false);
  assert.equal(check.llm_id, UNCONFIGURED_LLM);
  const raw = await freshMemory();
  const [plain] = await admin.addTurn([raw.id], { user_input: "hello", agent_response: "hi" });
  assert.equal(await admin.taskStatus(raw.id, plain!.message_id), null);
});

test("accounts: users, keys, teams, the caller, the audit log, people and the request log", async () => {
  const health = await admin.health();
  assert.ok(typeof health === "object");
  const me = await admin.me();
  assert.equal(me.is_admin, true);
  const user = await admin.createUser(unique("dana"));
  assert.ok((await admin.listUsers()).some((u) => u.id === user.id));
  const [record, key] = await admin.createApiKey(user.id, { name: "agent", capabilities: ["read"] });
  assert.match(key, /\S{20,}/);
  assert.deepEqual(record.capabilities, ["read"]);
  assert.deepEqual((await admin.listApiKeys(user.id)).map((k) => k.id), [record.id]);
  assert.deepEqual((await client(key).me()).capabilities, ["read"]);

  await admin.joinTeam(me.tenant_ids[0]!, user.id);
  assert.ok((await admin.teamMembers(me.tenant_ids[0]!)).includes(user.id));
  await admin.leaveTeam(me.tenant_ids[0]!, user.id);
  assert.ok(!(await admin.teamMembers(me.tenant_ids[0]!)).includes(user.id));

  await admin.revokeApiKey(user.id, record.id);
  await assert.rejects(client(key).me(), { name: "Unauthorized", code: 401 });

  const memory = await freshMemory();
  await admin.addTurn([memory.id], { user_input: "hi", agent_response: "hello", user_id: "u-erin" });
  const audit = await admin.auditLog({ memory_id: memory.id });
  assert.ok(audit.items.length >= 1 && audit.items.every((a) => a.memory_id === memory.id));
  const people = await admin.listSubjects("user", { keywords: "u-erin" });
  assert.deepEqual(people.items.map((p) => p.id), ["u-erin"]);
  assert.deepEqual(await admin.people("user", { keywords: "u-erin" }), people); // the old name
  assert.ok((await admin.requestLog({ page_size: 5 })).items.length >= 1);

  const forget = await admin.forgetSubject("u-erin");
  assert.equal(forget.dry_run, true);
  assert.equal(forget.entries, 1);
  const dry = await admin.eraseSubject("u-erin");
  assert.deepEqual(dry.memories.flatMap((m) => m.items.map((i) => i.user_id)), ["u-erin"]);
  const erased = await admin.eraseSubject("u-erin", { dry_run: false, token: dry.token, reason: "a request" });
  assert.equal(erased.entries, 1);
  await assert.rejects(admin.eraseSubject("u-erin", { dry_run: false, token: dry.token }), Conflict);
  assert.deepEqual(await admin.search("hi", [memory.id], { user_id: "u-erin" }), []);
});

test("bad input names the field", async () => {
  const memory = await freshMemory();
  await assert.rejects(admin.search("q", [memory.id], { top_n: 1000 }), (e: unknown) => {
    assert.ok(e instanceof InvalidInput);
    assert.equal(e.field, "top_n");
    assert.equal(e.code, 101);
    return true;
  });
});
