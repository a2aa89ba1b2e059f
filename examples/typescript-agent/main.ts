/**
 * Chat in a terminal with the agent of agent.ts on any OpenAI-compatible model.
 *
 *   RECALLERY_API_KEY=rc-... OPENAI_API_KEY=sk-... npm start -- --memory <memory id> --user me
 *
 * RECALLERY_URL (default http://127.0.0.1:9380), OPENAI_BASE_URL (another endpoint) and
 * OPENAI_MODEL (default gpt-4o-mini) choose the rest. An empty line ends the chat.
 */
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";

import { createOpenAI } from "@ai-sdk/openai";
import { Client, RecalleryError } from "recallery";

import { ChatAgent } from "./agent.js";

const { values } = parseArgs({
  options: { memory: { type: "string" }, user: { type: "string" }, session: { type: "string" } },
});
if (!values.memory) {
  console.error("usage: npm start -- --memory <memory id> [--user <end user>] [--session <id>]");
  process.exit(2);
}
const recallery = new Client(process.env.RECALLERY_URL ?? "http://127.0.0.1:9380", {
  api_key: process.env.RECALLERY_API_KEY ?? null,
});
const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const agent = new ChatAgent(recallery, openai.chat(process.env.OPENAI_MODEL ?? "gpt-4o-mini"), {
  memory_id: values.memory,
  ...(values.user ? { user_id: values.user } : {}),
  ...(values.session ? { session_id: values.session } : {}),
});
const terminal = createInterface({ input: process.stdin, output: process.stdout });
try {
  for (;;) {
    const text = (await terminal.question("you> ").catch(() => "")).trim();
    if (!text) break;
    console.log(`assistant> ${await agent.reply(text)}`);
  }
} catch (error) {
  if (!(error instanceof RecalleryError)) throw error;
  console.error(`recallery refused: ${error.name}: ${error.message}`);
  process.exitCode = 1;
} finally {
  terminal.close();
}
