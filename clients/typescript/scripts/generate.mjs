// The TypeScript types of recallery's REST API, generated from the OpenAPI schema the server
// publishes (GET /openapi.json), so the client's request types cannot drift from the server.
//
//   npm run generate -- http://127.0.0.1:9380     regenerate src/schema.ts from a running server
//   npm run generate -- path/to/openapi.json      or from a saved schema
//
// The test suite regenerates from the server it starts and fails when the result differs from
// the committed src/schema.ts (test/schema.test.ts).
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

export const SCHEMA_FILE = fileURLToPath(new URL("../src/schema.ts", import.meta.url));

/** The OpenAPI document at a server's base URL (its /openapi.json) or in a file. */
export async function loadSchema(source) {
  if (/^https?:\/\//.test(source)) {
    const url = new URL("/openapi.json", source);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
    return response.json();
  }
  return JSON.parse(await readFile(source, "utf8"));
}

/** The text of src/schema.ts for an OpenAPI document. */
export async function schemaModule(document) {
  const ast = await openapiTS(document, { alphabetize: true });
  const header =
    COMMENT_HEADER +
    "// Generated from recallery's OpenAPI schema by `npm run generate`; edit nothing here.\n\n";
  return header + astToString(ast);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? process.env.RECALLERY_URL ?? "http://127.0.0.1:9380";
  await writeFile(SCHEMA_FILE, await schemaModule(await loadSchema(source)));
  console.log(`wrote ${SCHEMA_FILE}`);
}
