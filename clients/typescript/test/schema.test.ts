/** The committed types (src/schema.ts) are what the running server publishes: regenerated from
 * its /openapi.json, they come out the same. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { SERVER_URL } from "./support.js";

interface Generator {
  SCHEMA_FILE: string;
  loadSchema(source: string): Promise<unknown>;
  schemaModule(document: unknown): Promise<string>;
}

test("src/schema.ts is generated from the server's OpenAPI schema", async () => {
  const script = new URL("../../../../scripts/generate.mjs", import.meta.url).href;
  const generator = (await import(script)) as Generator;
  const expected = await generator.schemaModule(await generator.loadSchema(SERVER_URL));
  const committed = await readFile(generator.SCHEMA_FILE, "utf8");
  const ours = committed.split("\n");
  const theirs = expected.split("\n");
  const line = ours.findIndex((text, i) => text !== theirs[i]);
  assert.ok(
    committed === expected,
    `src/schema.ts differs from the server's /openapi.json at line ${line + 1}: ` +
      `${JSON.stringify(ours[line])}, the server's ${JSON.stringify(theirs[line])}. ` +
      "Regenerate it in clients/typescript with 'npm run generate -- <url of a server of this " +
      "tree>' and commit it with the change to the API.",
  );
});
