/** The AI SDK tools on the SDK's own mock model against the live server: remember then recall,
 * what a read-only or a scoped key gets, and the example agent. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { generateText, stepCountIs } from "ai";
import { NOTHING_RECALLED, memoryContext, memoryTools } from "recallery/ai";

import { ChatAgent } from "../../../examples/typescript-agent/agent.js";
import { scripted } from "./mock.js";
import { admin, freshMemory, userWithKey } from "./support.js";

async function factsMemory() {
  return admin.createMemory(`facts-${process.pid}-${Math.random()}`, ["raw", "semantic"], "all-MiniLM-L6-v2@Builtin", "gpt-4o-mini@OpenAI");
}

test("an agent remembers a fact through the tool, and recalls it for its user only", async () => {
  const memory = await factsMemory();
  const anna = await memoryTools(admin, memory.id, { user_id: "u-anna" });
  assert.deepEqual(Object.keys(anna).sort(), ["recall", "remember"]);

  const kept = await generateText({
    model: scripted({ tool: "remember", input: { fact: "Anna lives in Lyon" } }, { text: "I'll remember." }),
    tools: anna,
    stopWhen: stepCountIs(3),
    prompt: "Remember that I live in Lyon.",
  });
  assert.equal(kept.text, "I'll remember.");
  const output = String(kept.steps[0]?.toolResults[0]?.output);
  assert.match(output, /^Kept as entry \d+ \(add\)\.$/);
  const stored = await admin.search("Lyon", [memory.id], { user_id: "u-anna" });
  assert.deepEqual(stored.map((h) => [h.content, h.agent_id, h.message_type]), [["Anna lives in Lyon", "ai-sdk", "semantic"]]);

  const boris = await memoryTools(admin, memory.id, { user_id: "u-boris" });
  await boris["remember"]!.execute!({ fact: "Борис живёт в Казани" } as never, { toolCallId: "b", messages: [] });
  const recalled = await generateText({
    model: scripted({ tool: "recall", input: { query: "where does the user live" } }, { text: "Lyon." }),
    tools: anna,
    stopWhen: stepCountIs(3),
    prompt: "Where do I live?",
  });
  const block = String(recalled.steps[0]?.toolResults[0]?.output);
  assert.match(block, /Anna lives in Lyon/);
  assert.doesNotMatch(block, /Казани/, "another user's fact stays out");

  assert.match(await memoryContext(admin, memory.id, "Казань", { user_id: "u-boris" }), /Казани/);
  assert.equal(await memoryContext(admin, memory.id, "Казань", { user_id: "u-nobody" }), "");
  const nothing = await anna["recall"]!.execute!({ query: "favourite food" } as never, { toolCallId: "n", messages: [] });
  assert.ok(nothing === NOTHING_RECALLED || /Anna lives in Lyon/.test(String(nothing)));
});

test("a read-only key gets no remember tool, and its recall works", async () => {
  const memory = await factsMemory();
  await admin.addEntries(memory.id, ["Chen drinks green tea"], { user_id: "u-chen" });
  const reader = await userWithKey(["read"]);
  await admin.updateMemory(memory.id, { permissions: "team" });
  await admin.joinTeam(memory.tenant_id, reader.user_id);
  const tools = await memoryTools(reader.client, memory.id, { user_id: "u-chen" });
  assert.deepEqual(Object.keys(tools), ["recall"]);
  const said = await tools["recall"]!.execute!({ query: "what does Chen drink" } as never, { toolCallId: "r", messages: [] });
  assert.match(String(said), /green tea/);
});

test("a key scoped to another memory: remember answers with the refusal, recall finds nothing", async () => {
  const mine = await factsMemory();
  await admin.addEntries(mine.id, ["The vault code is 4711"]);
  const other = await freshMemory();
  const scoped = await userWithKey(["read", "write"], [other.id]);
  const tools = await memoryTools(scoped.client, mine.id);
  const remembered = await tools["remember"]!.execute!({ fact: "Injected" } as never, { toolCallId: "w", messages: [] });
  assert.match(String(remembered), /^recallery refused: NotFound: /);
  // A search over memories the key cannot read finds nothing (as RAGFlow answers it).
  const recalled = await tools["recall"]!.execute!({ query: "vault code" } as never, { toolCallId: "r", messages: [] });
  assert.equal(recalled, NOTHING_RECALLED);
  assert.deepEqual(await admin.search("Injected", [mine.id]), []);
  assert.equal((await admin.search("vault code", [mine.id])).length, 1);
});

test("the example agent recalls into its prompt, uses the tools and writes the turn", async () => {
  const memory = await factsMemory();
  await admin.addEntries(memory.id, ["Dana is allergic to peanuts"], { user_id: "u-dana" });
  const model = scripted(
    { tool: "remember", input: { fact: "Dana's sister is called Eva" } },
    { text: "Noted, and no peanuts." },
  );
  const agent = new ChatAgent(admin, model, { memory_id: memory.id, user_id: "u-dana", session_id: "chat-1" });
  const said = await agent.reply("My sister is Eva. Suggest a snack for me?");
  assert.equal(said, "Noted, and no peanuts.");
  const prompt = JSON.stringify(model.doGenerateCalls[0]?.prompt);
  assert.match(prompt, /allergic to peanuts/, "the context block is in the system prompt");
  const turns = await admin.listMessages(memory.id, { session_id: "chat-1" });
  assert.equal(turns.total, 1);
  assert.match(turns.items[0]?.content ?? "", /Noted, and no peanuts/);
  const facts = await admin.search("sister", [memory.id], { user_id: "u-dana", types: ["semantic"] });
  assert.ok(facts.some((h) => h.content === "Dana's sister is called Eva"));
  assert.deepEqual(agent.history.map((m) => m.role), ["user", "assistant"]);
});
