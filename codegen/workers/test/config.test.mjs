// The shared config table (testdata/config/table.json), run against the
// Worker's config check: the same problem sentence as check/ir's
// ValueProblem (TestValueProblemTable), case for case; and the Worker's
// handlers doing nothing while a config value does not fit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configProblem, checkConfig, withConfigCheck } from "../config.mjs";
import { validEmail, instant, validDuration, jadpoWorker } from "../jadpo.mjs";

const tablePath = fileURLToPath(new URL("../../../testdata/config/table.json", import.meta.url));
const table = JSON.parse(readFileSync(tablePath, "utf8"));
const compilePattern = (p) => { new RegExp(p, "u"); return new RegExp("^(?:" + p + ")$", "u"); };
const lib = { validEmail, instant, validDuration, compilePattern };

test("the config table holds enough cases", () => assert.ok(table.cases.length >= 50));

for (const c of table.cases) {
  test(`config ${c.type.kind} ${JSON.stringify(c.type.rules || {})} ${JSON.stringify(c.value)}`, () => {
    assert.equal(configProblem(c.type, c.value, lib), c.problem);
  });
}

const plan = {
  version: 1, config: [
    { name: "batch_limit", binding: "BATCH_LIMIT", type: { kind: "int", rules: { min: "1" } }, default: 10 },
    { name: "region", binding: "REGION", type: { kind: "text", rules: { patterns: ["[a-z]{2}-[a-z]+-[0-9]"] } }, default: "eu-west-1" },
    { name: "api_key", binding: "API_KEY", type: { kind: "text", rules: { min_length: 20 } }, secret: true },
  ], records: [], connections: [], queues: [], subscribers: [],
};

test("checkConfig names each field and binding, never a value", () => {
  const problems = checkConfig(plan, { BATCH_LIMIT: "-5", REGION: "XX", API_KEY: "CANARY-short" }, lib);
  assert.deepEqual(problems, [
    { field: "batch_limit", binding: "BATCH_LIMIT", problem: "is below the minimum 1" },
    { field: "region", binding: "REGION", problem: "does not match the pattern `[a-z]{2}-[a-z]+-[0-9]`" },
    { field: "api_key", binding: "API_KEY", problem: "is shorter than the minimum length 20" },
  ]);
  assert.deepEqual(checkConfig(plan, { API_KEY: "0123456789abcdefghij" }, lib), []);
  assert.deepEqual(checkConfig(plan, {}, lib), []); // unset: the default's, or unused
});

test("a Worker whose config does not fit does no work and says why once, without the value", async () => {
  const errors = [];
  const orig = console.error;
  console.error = (s) => errors.push(s);
  try {
    let calls = 0;
    const h = withConfigCheck(plan, { queue: async () => { calls++; }, deliver: async () => { calls++; } }, lib);
    const env = { BATCH_LIMIT: "-5", API_KEY: "CANARY-short-secret" };
    assert.throws(() => h.queue({ messages: [] }, env, {}), /config field batch_limit \(binding BATCH_LIMIT\) is below the minimum 1/);
    assert.throws(() => h.deliver(env), /cannot start/);
    assert.equal(calls, 0);
    assert.equal(errors.length, 1);
    assert.ok(!errors.join("").includes("CANARY"));
    const good = { API_KEY: "0123456789abcdefghij" };
    await h.queue({ messages: [] }, good, {});
    await h.deliver(good);
    assert.equal(calls, 2);
  } finally {
    console.error = orig;
  }
});

test("jadpoWorker's handlers are checked", () => {
  const w = jadpoWorker(plan);
  assert.throws(() => w.deliver({ BATCH_LIMIT: "0", API_KEY: "0123456789abcdefghij" }), /is below the minimum 1/);
});

// The built Worker (examples/returns, `jadpo build --target workers`) under
// miniflare: given a REFUNDS_HOST that is no absolute URL, its queue
// consumer does nothing with the batch (no message acknowledged, nothing
// sent) and its log names the field and binding, not the value.
test("the built Worker checks its config at start (miniflare)", async () => {
  const { execFileSync } = await import("node:child_process");
  const { cpSync, mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { Miniflare } = await import("miniflare");
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  const tmp = mkdtempSync(join(tmpdir(), "jadpo-worker-config-"));
  const project = join(tmp, "returns");
  cpSync(join(repo, "examples", "returns"), project, { recursive: true, filter: (src) => !src.includes(join("returns", "build")) });
  const bin = process.env.JADPO_BIN;
  const args = ["build", "--target", "workers", project];
  const [cmd, argv] = bin ? [bin, args] : ["go", ["run", "./cmd/jadpo", ...args]];
  execFileSync(cmd, argv, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const built = join(project, "build", "workers");
  const logs = [];
  const mf = new Miniflare({
    modules: true, scriptPath: join(built, "worker.mjs"), modulesRoot: built, compatibilityDate: "2025-09-01",
    d1Databases: { JADPO_DB: "returns-events" },
    queueConsumers: { returns: { maxBatchSize: 10, maxRetries: 3 } },
    bindings: { REFUNDS_HOST: "CANARY-not-a-url", REFUNDS_TOKEN: "t" },
    handleRuntimeStdio: (stdout, stderr) => {
      for (const s of [stdout, stderr]) s.on("data", (d) => logs.push(String(d)));
    },
  });
  try {
    const worker = await mf.getWorker();
    const r = await worker.queue("returns", [{ id: "m-1", timestamp: new Date(1_700_000_000_000), body: '{"return_id":"r-1"}', attempts: 1 }]);
    assert.notEqual(r.outcome, "ok");
    assert.deepEqual(r.explicitAcks, []);
    await new Promise((res) => setTimeout(res, 100));
    const text = logs.join("");
    assert.match(text, /config field refunds_host \(binding REFUNDS_HOST\) is not an absolute URL|"field":"refunds_host","binding":"REFUNDS_HOST"/);
    assert.ok(!text.includes("CANARY"), text);
  } finally {
    await mf.dispose();
    rmSync(tmp, { recursive: true, force: true });
  }
});
