// `npm test`: build the client, then run its tests (node --test) against a live `recallery
// serve` this script starts on a free port with a fresh data directory and an admin key, and
// stops afterwards. The Python SDK's calls and error mapping (scripts/python_sdk.py) are
// written to a file the tests compare the client with.
//
// Finds recallery's Python and command in ../../.venv (what scripts/setup makes), else on PATH;
// RECALLERY_PYTHON and RECALLERY_BIN choose others. Extra arguments go to node --test.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = join(here, "..", "..");
const venv = (name) => join(repo, ".venv", "bin", name);
const python = process.env.RECALLERY_PYTHON ?? (existsSync(venv("python")) ? venv("python") : "python3");
const recallery = process.env.RECALLERY_BIN ?? (existsSync(venv("recallery")) ? venv("recallery") : "recallery");

function run(command, args, options = {}) {
  const done = spawnSync(command, args, { cwd: here, stdio: "inherit", ...options });
  if (done.status !== 0) {
    console.error(`npm test: ${command} ${args.join(" ")} failed (${done.error ?? done.status})`);
    process.exit(1);
  }
  return done;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function ready(url, server, seconds) {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (server.exitCode !== null) throw new Error(`recallery serve exited (${server.exitCode})`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`recallery serve did not answer at ${url} within ${seconds} s`);
}

/** The README's TypeScript quick start, written where the test build type-checks it. */
async function readmeSnippet() {
  const readme = await readFile(join(repo, "README.md"), "utf8");
  const section = readme.split("\n### TypeScript")[1] ?? "";
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("README.md: no ```ts block under '### TypeScript'");
  await mkdir(join(here, "test", "generated"), { recursive: true });
  await writeFile(join(here, "test", "generated", "readme.ts"), block[1]);
}

await readmeSnippet();
run("npx", ["tsc", "-p", "tsconfig.json"]);
run("npx", ["tsc", "-p", "tsconfig.test.json"]);

const work = await mkdtemp(join(tmpdir(), "recallery-ts-"));
const facts = join(work, "python-sdk.json");
const sdk = run(python, [join(here, "scripts", "python_sdk.py")], { stdio: ["ignore", "pipe", "inherit"] });
await writeFile(facts, sdk.stdout);

const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const adminKey = `rc-${randomBytes(24).toString("hex")}`;
const env = { ...process.env, RECALLERY_ADMIN_API_KEY: adminKey };
const log = join(work, "serve.log");
const server = spawn(
  recallery,
  ["serve", "--data-dir", join(work, "data"), "--port", String(port), "--log-level", "warning"],
  { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] },
);
const output = [];
server.stdout.on("data", (chunk) => output.push(chunk));
server.stderr.on("data", (chunk) => output.push(chunk));
server.on("error", (error) => output.push(Buffer.from(String(error))));

let status = 1;
try {
  await ready(url, server, 60);
  const built = join(here, ".test-build", "clients", "typescript", "test");
  const tests = (await readdir(built)).filter((f) => f.endsWith(".test.js")).map((f) => join(built, f));
  const done = spawnSync(
    process.execPath,
    ["--test", "--test-concurrency=1", ...process.argv.slice(2), ...tests],
    {
      cwd: here,
      stdio: "inherit",
      env: {
        ...process.env,
        RECALLERY_TEST_URL: url,
        RECALLERY_TEST_ADMIN_KEY: adminKey,
        RECALLERY_TEST_PYTHON_SDK: facts,
      },
    },
  );
  status = done.status ?? 1;
} catch (error) {
  console.error(`npm test: ${error.message}`);
} finally {
  server.kill("SIGTERM");
  await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)));
  if (status !== 0) {
    await writeFile(log, Buffer.concat(output));
    console.error(`npm test: the server's output is in ${log}`);
  } else {
    await rm(work, { recursive: true, force: true });
  }
}
process.exit(status);
