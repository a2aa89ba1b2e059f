/** The README's TypeScript quick start runs as written against the live server (npm test puts
 * it in test/generated/readme.ts, so the build type-checks it too). */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { SERVER_URL, admin } from "./support.js";

test("the README's TypeScript snippet runs", async () => {
  const { user_id } = { user_id: (await admin.createUser(`readme-${process.pid}`)).id };
  const [, key] = await admin.createApiKey(user_id, { capabilities: ["read", "write", "manage"] });
  const script = fileURLToPath(new URL("./generated/readme.js", import.meta.url));
  // The snippet names the default address; the test's server listens elsewhere.
  const source = `globalThis.fetch = ((f) => (url, init) => f(String(url).replace("http://127.0.0.1:9380", ${JSON.stringify(SERVER_URL)}), init))(globalThis.fetch);`;
  const ran = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(source)}`, script], {
    env: { ...process.env, RECALLERY_API_KEY: key },
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(ran.status, 0, ran.stderr);
  assert.match(ran.stdout, /^\d\.\d{3} User Input: I moved to Berlin last spring\./m);
  assert.match(ran.stdout, /Fence tag/);
});
