// The built Worker of examples/returns under miniflare (workerd): batches
// dispatched to its queue consumer and its dead-letter consumer, deliveries
// run against a local stand-in of the refunds service, D1 read afterwards.
// The jadpo binary builds it: JADPO_BIN, else `go run ./cmd/jadpo`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { LEASE_MS, SQL, jadpoWorker } from "../jadpo.mjs";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "jadpo-worker-"));
const project = join(tmp, "returns");
const persist = join(tmp, "d1");

function jadpo(...args) {
  const bin = process.env.JADPO_BIN;
  const [cmd, argv] = bin ? [bin, args] : ["go", ["run", "./cmd/jadpo", ...args]];
  return execFileSync(cmd, argv, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

// The stand-in of the refunds service: it answers each POST /refunds with
// the next status of `answers` (200 when none is left) and records each.
// A request whose body holds a key of `holds` waits for its promise first
// (once: the key is taken).
const calls = [];
let answers = [];
const holds = new Map();
// A request whose body holds a text of `drops` gets no answer: its
// connection is closed.
const drops = new Set();
const standin = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", async () => {
    calls.push({ method: req.method, url: req.url, auth: req.headers.authorization, body });
    if ([...drops].some((d) => body.includes(d))) {
      req.socket.destroy();
      return;
    }
    for (const [key, wait] of holds) {
      if (body.includes(key)) {
        holds.delete(key);
        await wait;
        break;
      }
    }
    res.statusCode = answers.length > 0 ? answers.shift() : 200;
    res.setHeader("content-type", "application/json");
    res.end(res.statusCode < 300 ? `{"refund_id":"rf-${calls.length}"}` : `{"error":{"code":"${res.statusCode >= 500 ? "Unavailable" : "RefundRefused"}"}}`);
  });
});

let mf, worker, db, wrangler;
const TOKEN = "standin-refunds-token";

// splitSQL cuts the migration into statements: each ends with `;` at a line's
// end, a trigger's body running to its `END;`.
function splitSQL(sql) {
  const out = [];
  let cur = [];
  let inTrigger = false;
  for (const line of sql.split("\n")) {
    if (cur.length === 0 && (line.startsWith("--") || line.trim() === "")) continue;
    cur.push(line);
    if (/^CREATE TRIGGER/.test(line)) inTrigger = true;
    if (inTrigger ? /^END;\s*$/.test(line) : /;\s*$/.test(line)) {
      out.push(cur.join("\n"));
      cur = [];
      inTrigger = false;
    }
  }
  return out;
}

before(async () => {
  cpSync(join(repo, "examples", "returns"), project, { recursive: true, filter: (src) => !src.includes(`${join("returns", "build")}`) });
  jadpo("build", "--target", "workers", project);
  const built = join(project, "build", "workers");
  wrangler = readFileSync(join(built, "wrangler.toml"), "utf8");
  const compat = /compatibility_date = "([0-9-]+)"/.exec(wrangler)[1];
  assert.match(wrangler, /queue = "returns"\nmax_batch_size = 10\nmax_retries = 3\ndead_letter_queue = "returns-dlq"/);
  await new Promise((r) => standin.listen(0, "127.0.0.1", r));
  mf = new Miniflare({
    modules: true,
    scriptPath: join(built, "worker.mjs"),
    modulesRoot: built,
    compatibilityDate: compat,
    d1Databases: { JADPO_DB: "returns-events" },
    d1Persist: persist,
    queueConsumers: {
      returns: { maxBatchSize: 10, maxRetries: 3, deadLetterQueue: "returns-dlq" },
      "returns-dlq": { maxBatchSize: 10, maxRetries: 3 },
    },
    bindings: { REFUNDS_HOST: `http://127.0.0.1:${standin.address().port}`, REFUNDS_TOKEN: TOKEN },
  });
  worker = await mf.getWorker();
  db = await mf.getD1Database("JADPO_DB");
  const migration = readFileSync(join(built, "migrations", "0001_jadpo.sql"), "utf8");
  await db.batch(splitSQL(migration).map((s) => db.prepare(s)));
});

after(async () => {
  if (mf) await mf.dispose();
  standin.close();
  rmSync(tmp, { recursive: true, force: true });
});

let seq = 0;
function msg(body, attempts = 1) {
  seq++;
  return { id: `msg-${seq}`, timestamp: new Date(1_700_000_000_000), body, attempts };
}
function ret(id, extra = {}) {
  return JSON.stringify({
    return_id: id, type: "return_requested", order_id: `order-${id}`, customer_email: "a@example.com",
    items: { "SKU-1": 2 }, requested_at: "2026-11-30T10:00:00+01:00", ...extra,
  });
}
async function count(table, where = "1") {
  return (await db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).first()).n;
}
async function settled(n) {
  // Deliveries run within the invocation (ctx.waitUntil); wait until they settled.
  for (let i = 0; i < 200 && (await count("jadpo_deliveries", "state IN ('pending','running')")) > 0; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  return count("jadpo_deliveries", "state = 'succeeded'");
}
const acked = (r) => [...r.explicitAcks].sort();
const retried = (r) => r.retryMessages.map((m) => m.msgId).sort();

test("a batch: each message kept once, a repeat acknowledged and not kept, parked once per body, then all acknowledged", async () => {
  const batch = [msg(ret("r-1")), msg(ret("r-1")), msg("not json"), msg("not json"), msg(JSON.stringify({ return_id: "r-9", type: "gift_card" })),
    msg(new TextEncoder().encode(ret("r-2")))];
  const r = await worker.queue("returns", batch);
  assert.equal(r.outcome, "ok");
  assert.deepEqual(acked(r), batch.map((m) => m.id).sort());
  assert.deepEqual(retried(r), []);
  assert.equal(await count("jadpo_received_events"), 2);
  assert.equal(await count("jadpo_outbox"), 2);
  assert.equal(await count("jadpo_deliveries"), 2);
  const ev = await db.prepare("SELECT source, event_name, event_json FROM jadpo_outbox WHERE received_id = 'r-1'").first();
  assert.deepEqual(ev, {
    source: "queue returns_queue", event_name: "ReturnRequested",
    event_json: '{"customer_email":"a@example.com","items":{"SKU-1":2},"order_id":"order-r-1","requested_at":"2026-11-30T09:00:00Z"}',
  });
  const parked = (await db.prepare("SELECT reason, problems, wire_type FROM jadpo_parked_messages ORDER BY id").all()).results;
  assert.deepEqual(parked, [
    { reason: "unreadable", problems: '[{"field":"","rule":"json"}]', wire_type: null },
    { reason: "unlisted_type", problems: "[]", wire_type: "gift_card" },
  ]);
  // The same batch again: every message acknowledged, nothing more kept or parked.
  const again = await worker.queue("returns", batch.map((m) => ({ ...m, attempts: 2 })));
  assert.deepEqual(acked(again), batch.map((m) => m.id).sort());
  assert.equal(await count("jadpo_outbox"), 2);
  assert.equal(await count("jadpo_parked_messages"), 2);
  // Deliveries settled once each, with the bearer token and the operation's input.
  assert.equal(await settled(), 2);
  const refunds = calls.filter((c) => c.url === "/refunds");
  assert.equal(refunds.length, 2);
  assert.ok(refunds.every((c) => c.method === "POST" && c.auth === `Bearer ${TOKEN}`));
  assert.deepEqual(JSON.parse(refunds.find((c) => c.body.includes("order-r-1")).body),
    { order_id: "order-r-1", customer_email: "a@example.com", items: { "SKU-1": 2 } });
});

test("a D1 failure: the batch is retried, not acknowledged, and kept once D1 takes it", async () => {
  await db.prepare("ALTER TABLE jadpo_outbox RENAME TO jadpo_outbox_away").run();
  const batch = [msg(ret("r-3")), msg(ret("r-4"))];
  let r;
  try {
    r = await worker.queue("returns", batch);
  } finally {
    await db.prepare("ALTER TABLE jadpo_outbox_away RENAME TO jadpo_outbox").run();
  }
  assert.deepEqual(acked(r), []);
  assert.deepEqual(retried(r), batch.map((m) => m.id).sort());
  assert.equal(await count("jadpo_received_events", "received_id IN ('r-3','r-4')"), 0);
  const again = await worker.queue("returns", batch.map((m) => ({ ...m, attempts: 2 })));
  assert.deepEqual(acked(again), batch.map((m) => m.id).sort());
  assert.equal(await count("jadpo_outbox", "received_id IN ('r-3','r-4')"), 2);
  await settled();
});

test("a message D1 refuses as a statement is found by keeping one by one: parked unreadable (store), the rest kept", async () => {
  const bad = msg(ret("r-5", { order_id: "order-\u0000-nul" }));
  const batch = [msg(ret("r-6")), bad, msg(ret("r-7"))];
  const r = await worker.queue("returns", batch);
  assert.deepEqual(acked(r), batch.map((m) => m.id).sort());
  assert.equal(await count("jadpo_outbox", "received_id IN ('r-6','r-7')"), 2);
  assert.equal(await count("jadpo_received_events", "received_id = 'r-5'"), 0);
  const p = await db.prepare("SELECT reason, problems, event_name FROM jadpo_parked_messages WHERE problems LIKE '%store%'").all();
  assert.deepEqual(p.results, [{ reason: "unreadable", problems: '[{"field":"","rule":"store"}]', event_name: "ReturnRequested" }]);
  await settled();
});

test("a subscriber's temporary refusal is retried after its backoff and settled once", async () => {
  answers = [503];
  const before = calls.length;
  await worker.queue("returns", [msg(ret("r-8"))]);
  const row = async () => db.prepare(`SELECT d.id, d.state, d.attempts, d.next_attempt_at, d.last_error_code, d.last_error FROM jadpo_deliveries d
    JOIN jadpo_outbox o ON o.id = d.outbox_id WHERE o.received_id = 'r-8'`).first();
  for (let i = 0; i < 200 && ["pending", "running"].includes((await row()).state); i++) await new Promise((r) => setTimeout(r, 25));
  const first = await row();
  assert.equal(first.state, "retry_wait");
  assert.equal(first.attempts, 1);
  assert.equal(first.last_error_code, "unavailable"); // read at the package's error_code: "error.code"
  // The last error's text, as the native wire.Refusal writes it (never the answer's text).
  assert.equal(first.last_error, "refunds.open_refund refused: unavailable (HTTP 503, temporary)");
  // The cron trigger runs what is due: wait until next_attempt_at has passed.
  while (Date.now() * 1000 <= first.next_attempt_at) await new Promise((r) => setTimeout(r, 50));
  await worker.scheduled({ cron: "* * * * *" });
  const second = await row();
  assert.equal(second.state, "succeeded");
  assert.equal(second.attempts, 2);
  assert.equal(second.last_error_code, null);
  assert.equal(second.last_error, null);
  // One attempt row per settled attempt, as the native store writes them.
  const log = (await db.prepare(`SELECT attempt, outcome, error_code, error, at FROM jadpo_delivery_attempts
    WHERE delivery_id = ?1 ORDER BY id`).bind(second.id).all()).results;
  assert.deepEqual(log.map(({ at, ...a }) => a), [
    { attempt: 1, outcome: "retry_wait", error_code: "unavailable", error: "refunds.open_refund refused: unavailable (HTTP 503, temporary)" },
    { attempt: 2, outcome: "succeeded", error_code: null, error: null },
  ]);
  assert.ok(log[0].at < log[1].at && log[1].at <= Date.now() * 1000, `attempt times ${log.map((a) => a.at)}`);
  assert.equal(calls.length - before, 2);
  // Nothing is due any more: the backstop delivers nothing twice.
  await worker.scheduled({ cron: "* * * * *" });
  assert.equal(calls.length - before, 2);
});

test("the dead-letter consumer keeps a readable message (a D1 outage sent it there), parks an unreadable one with its reading, acknowledges a kept one", async () => {
  const last = (await db.prepare("SELECT max(id) AS id FROM jadpo_parked_messages").first()).id;
  const batch = [msg(ret("r-20"), 4), msg("{broken", 4), msg(ret("r-1"), 4)];
  const r = await worker.queue("returns-dlq", batch);
  assert.deepEqual(acked(r), batch.map((m) => m.id).sort());
  assert.equal(await count("jadpo_received_events", "received_id = 'r-20'"), 1);
  assert.equal(await count("jadpo_outbox", "received_id = 'r-20'"), 1);
  assert.equal(await count("jadpo_outbox", "received_id = 'r-1'"), 1);
  const p = (await db.prepare("SELECT reason, problems, source FROM jadpo_parked_messages WHERE id > ?1 ORDER BY id").bind(last).all()).results;
  assert.deepEqual(p, [{ reason: "unreadable", problems: '[{"field":"","rule":"json"}]', source: "queue returns_queue" }]);
  await settled();
});

test("a json body arrives parsed: kept when exact, and an id past 2^53 parked, never merged with its neighbour", async () => {
  const obj = JSON.parse(ret("r-30"));
  const r = await worker.queue("returns", [msg(obj), msg({ ...obj, return_id: 9007199254740993 })]);
  assert.equal(r.explicitAcks.length, 2);
  assert.equal(await count("jadpo_outbox", "received_id = 'r-30'"), 1);
  assert.equal(await count("jadpo_received_events", "received_id LIKE '900719925474099%'"), 0);
  assert.equal(await count("jadpo_parked_messages", `problems = '[{"field":"return_id","rule":"type"}]'`), 1);
  await settled();
});

test("the keeping statements write a delivery per subscriber of a new event, and nothing for a repeat", async () => {
  const keep = (id) => [
    db.prepare(SQL.received).bind("queue two", id, 1),
    db.prepare(SQL.outbox).bind("queue two", "E", "{}", id, 1, null),
    db.prepare(SQL.deliveries).bind("queue two", id, 1, JSON.stringify(["a", "b", "c"])),
  ];
  await db.batch([...keep("x-1"), ...keep("x-2"), ...keep("x-1")]);
  const rows = (await db.prepare(`SELECT o.received_id AS id, d.subscriber AS s FROM jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id
    WHERE o.source = 'queue two' ORDER BY o.received_id, d.subscriber`).all()).results;
  assert.deepEqual(rows.map((r) => `${r.id}:${r.s}`), ["x-1:a", "x-1:b", "x-1:c", "x-2:a", "x-2:b", "x-2:c"]);
  assert.equal(await count("jadpo_outbox", "source = 'queue two'"), 2);
  await db.prepare("DELETE FROM jadpo_deliveries WHERE outbox_id IN (SELECT id FROM jadpo_outbox WHERE source = 'queue two')").run();
});

test("fencing: a claim taken over after its lease runs out settles nothing; the later claim settles", async () => {
  await db.batch([
    db.prepare(SQL.received).bind("queue fence", "f-1", 1),
    db.prepare(SQL.outbox).bind("queue fence", "E", "{}", "f-1", 1, null),
    db.prepare(SQL.deliveries).bind("queue fence", "f-1", 1, JSON.stringify(["only"])),
  ]);
  const claim = async (at) => (await db.prepare(SQL.claim).bind(at, at + 60_000_000, 100).all()).results.find((c) => c.subscriber === "only");
  const first = await claim(2);
  assert.equal(await claim(3), undefined, "a running delivery within its lease is not claimed again");
  // Its handler started, so the attempt counts (a claim that never ran would not).
  assert.equal((await db.prepare(SQL.start).bind(first.id, first.fencing_token, 4).run()).meta.changes, 1);
  const second = await claim(60_000_003); // the first lease has run out
  assert.equal(second.id, first.id);
  assert.equal(second.attempts, 2);
  assert.equal((await db.prepare(SQL.start).bind(first.id, first.fencing_token, 60_000_004).run()).meta.changes, 0,
    "a stale token writes no start");
  // A settlement is its settle and its attempt's row, in one batch.
  const settle = async (c) => (await db.batch([db.prepare(SQL.settle).bind(c.id, c.fencing_token, "succeeded", null, null, 60_000_004, null),
    db.prepare(SQL.attempt).bind(c.id, c.fencing_token)])).map((r) => r.meta.changes);
  assert.deepEqual(await settle(first), [0, 0], "a stale token settles nothing and writes no attempt");
  assert.deepEqual(await settle(second), [1, 1]);
  assert.deepEqual((await db.prepare("SELECT attempt, at, outcome FROM jadpo_delivery_attempts WHERE delivery_id = ?1").bind(first.id).all()).results,
    [{ attempt: 2, at: 60_000_004, outcome: "succeeded" }]);
  await db.prepare("DELETE FROM jadpo_delivery_attempts WHERE delivery_id = ?1").bind(first.id).run();
  await db.prepare("DELETE FROM jadpo_deliveries WHERE id = ?1").bind(first.id).run();
});

test("jadpo deliveries reads the local D1 database (SQLite)", async () => {
  const file = findSQLite(persist);
  assert.ok(file, "miniflare persisted no D1 database");
  const db1 = `sqlite:${file}`;
  const listed = JSON.parse(jadpo("deliveries", "list", "--json", "--database", db1)).entries;
  const gift = listed.find((x) => x.wireType === "gift_card");
  assert.ok(gift, "the parked unlisted_type message is listed");
  assert.equal(gift.code, "unlisted_type");
  assert.match(jadpo("deliveries", "show", gift.id, "--body", "--database", db1), /gift_card/);
  jadpo("deliveries", "dismiss", gift.id, "--database", db1);
  const state = await db.prepare("SELECT state FROM jadpo_parked_messages WHERE wire_type = 'gift_card'").first();
  assert.equal(state.state, "dismissed");

  // A delivery the service refused for good fails at once; `jadpo deliveries
  // retry` makes it pending on the D1 file, and the Worker's cron delivers it.
  answers = [400];
  await worker.queue("returns", [msg(ret("r-40"))]);
  const row = async () => db.prepare(`SELECT d.id, d.state, d.attempts FROM jadpo_deliveries d
    JOIN jadpo_outbox o ON o.id = d.outbox_id WHERE o.received_id = 'r-40'`).first();
  for (let i = 0; i < 200 && ["pending", "running"].includes((await row()).state); i++) await new Promise((r) => setTimeout(r, 25));
  const failed = await row();
  assert.equal(failed.state, "failed");
  // `jadpo deliveries show` lists its attempt, with the error the Worker kept.
  const shown = jadpo("deliveries", "show", `d${failed.id}`, "--database", db1);
  assert.match(shown, /last error: +refunds\.open_refund refused: refund_refused \(HTTP 400, permanent\)\n/);
  assert.match(shown, /attempt: +\S+ +\\?#1 +failed +refund_refused +refunds\.open_refund refused: refund_refused \(HTTP 400, permanent\)\n/);
  const listedFailed = JSON.parse(jadpo("deliveries", "list", "--json", "--database", db1)).entries;
  assert.ok(listedFailed.some((x) => x.id === `d${failed.id}` && x.kind === "delivery"), "the failed delivery is listed");
  jadpo("deliveries", "retry", `d${failed.id}`, "--database", db1);
  assert.equal((await row()).state, "pending");
  await worker.scheduled({ cron: "* * * * *" });
  assert.equal((await row()).state, "succeeded");
});

function findSQLite(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      const f = findSQLite(p);
      if (f) return f;
    } else if (name.endsWith(".sqlite") && name !== "metadata.sqlite") return p;
  }
  return null;
}

// counting wraps a D1 binding and counts the calls that reach D1: each
// statement run on its own (run, all, first), and each batch as the names
// of its statements (SQL's keys). failBatches refuses that many of the
// batches holding a settlement; hold(names) is awaited before a batch goes.
const sqlNames = new Map(Object.entries(SQL).map(([k, v]) => [v, k]));
function counting(d1, failBatches = 0, hold = null) {
  const n = { alone: 0, batches: [] };
  const real = new WeakMap();
  const names = new WeakMap();
  const wrap = (st, name) => {
    const p = new Proxy(st, {
      get(t, k) {
        if (k === "bind") return (...a) => wrap(t.bind(...a), name);
        if (k === "run" || k === "all" || k === "first") return (...a) => { n.alone++; return t[k](...a); };
        const v = t[k];
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
    real.set(p, st);
    names.set(p, name);
    return p;
  };
  const binding = {
    prepare: (q) => wrap(d1.prepare(q), sqlNames.get(q) || q),
    batch: async (stmts) => {
      const kinds = stmts.map((s) => names.get(s));
      n.batches.push(kinds);
      if (hold) await hold(kinds);
      if (kinds.includes("settle") && failBatches-- > 0) throw new Error("D1_ERROR: injected");
      return d1.batch(stmts.map((s) => real.get(s) || s));
    },
  };
  return { n, binding };
}

// keepForOpenRefund writes n kept ReturnRequested events, each with its
// pending open_refund delivery, as the queue consumer would.
async function keepForOpenRefund(prefix, n) {
  const stmts = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${i}`;
    stmts.push(db.prepare(SQL.received).bind("queue returns_queue", id, 1),
      // The outbox row as the consumer writes it (spelled out, so that this
      // helper does not depend on the keeping statements it is not testing).
      db.prepare(`INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, settled_at)
        VALUES (?1, ?2, ?3, ?4, ?5, NULL)`).bind("queue returns_queue", "ReturnRequested", ret(id), id, 1),
      db.prepare(SQL.deliveries).bind("queue returns_queue", id, 1, JSON.stringify(["open_refund"])));
  }
  await db.batch(stmts);
}

// Issue 16's grouped settlement, on Workers, settled as each finishes
// (issue 24): no settlement is a statement of its own unless D1 refuses the
// batch it was in; those finishing together share a batch. The stand-in
// answers all twelve at once, so they finish together.
test("deliveries: settlements finishing together share a D1 batch; a refused batch is settled one by one", async () => {
  const plan = JSON.parse(readFileSync(join(project, "build", "plan.json"), "utf8"));
  const w = jadpoWorker(plan);
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  for (const failBatches of [0, 1]) {
    const prefix = `g${failBatches}`;
    await keepForOpenRefund(prefix, 12);
    const before = calls.length;
    let release;
    const all = new Promise((r) => (release = r));
    for (let i = 0; i < 12; i++) holds.set(`order-${prefix}-${i}"`, all);
    const { n, binding } = counting(db, failBatches);
    const run = w.deliver(env(binding));
    while (calls.length - before < 12) await new Promise((r) => setTimeout(r, 5));
    release();
    const rep = await run;
    assert.deepEqual(rep, { claimed: 12, succeeded: 12, retried: 0, failed: 0, lost: 0 });
    // The claim and the claimed events alone; the handlers' starts (their
    // first attempts, not their last: written with the next write, the
    // handlers running meanwhile) in one batch, the claim's; the
    // settlements in batches (the first to finish alone, the others
    // together as it returns), each a settle and its attempt's row, and
    // after a refused batch its settlements one batch of two each.
    const sizes = JSON.stringify(n.batches);
    assert.equal(n.alone, 2, `D1 calls with ${failBatches} refused batch: ${JSON.stringify(n)}`);
    assert.deepEqual(n.batches[0], Array(12).fill("start"), `a claim's starts in one batch: ${sizes}`);
    const settles = n.batches.slice(1);
    assert.ok(settles.every((b) => b.join() === Array(b.length / 2).fill("settle,attempt").join()), `batches ${sizes}: a settle and its attempt's row each`);
    const alone = failBatches === 0 ? 0 : settles[0].length / 2;
    if (failBatches > 0) assert.deepEqual(settles.slice(1, 1 + alone).map((b) => b.length), Array(alone).fill(2), `after a refused batch: ${sizes}`);
    assert.ok(settles.length - alone >= 1 && settles.length - alone <= 4, `${settles.length} batches for 12 settlements finishing together: ${sizes}`);
    assert.equal(settles.slice(failBatches).flat().length, 24, "each settlement written once");
    assert.equal(await count("jadpo_delivery_attempts a JOIN jadpo_deliveries d ON d.id = a.delivery_id JOIN jadpo_outbox o ON o.id = d.outbox_id",
      `o.received_id LIKE '${prefix}-%' AND a.outcome = 'succeeded' AND a.attempt = 1`), 12, "an attempt row each");
    assert.equal(calls.length - before, 12, "each delivery's handler ran once");
    assert.equal(await count("jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id",
      `o.received_id LIKE '${prefix}-%' AND d.state = 'succeeded' AND d.attempts = 1`), 12);
  }
});

const env = (binding) => ({ JADPO_DB: binding, REFUNDS_HOST: `http://127.0.0.1:${standin.address().port}`, REFUNDS_TOKEN: TOKEN });
const planOf = () => JSON.parse(readFileSync(join(project, "build", "plan.json"), "utf8"));
async function until(f, what) {
  for (let i = 0; i < 400; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`waited 4 s for ${what}`);
}
const stateOf = async (id) => db.prepare(`SELECT d.state, d.attempts, d.last_error_code AS code FROM jadpo_deliveries d
  JOIN jadpo_outbox o ON o.id = d.outbox_id WHERE o.received_id = ?1`).bind(id).first();

// Issue 24: one slow delivery held the settlements of its whole claim (all
// written after the round's Promise.all), so a later invocation claimed the
// quick ones again once their lease ran out, and ran them twice.
test("a slow delivery beside quick ones in one claim: the quick ones are settled as they finish and run once (attempts 1)", { timeout: 20000 }, async () => {
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  await keepForOpenRefund("s", 5);
  let release;
  holds.set('order-s-0"', new Promise((r) => (release = r)));
  let t = Date.now();
  const clock = () => t;
  const before = calls.length;
  const run = jadpoWorker(planOf(), { now: clock }).deliver(env(db));
  try {
    await until(async () => (await count("jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id",
      "o.received_id IN ('s-1','s-2','s-3','s-4') AND d.state = 'succeeded' AND d.attempts = 1")) === 4,
      "the quick deliveries to settle while the slow one runs");
    assert.equal((await stateOf("s-0")).state, "running");
    // Past the lease, another invocation claims what is unsettled: the slow one only.
    t += LEASE_MS + 1000;
    const later = await jadpoWorker(planOf(), { now: clock }).deliver(env(db));
    assert.deepEqual(later, { claimed: 1, succeeded: 1, retried: 0, failed: 0, lost: 0 });
  } finally {
    release();
  }
  assert.deepEqual(await run, { claimed: 5, succeeded: 4, retried: 0, failed: 0, lost: 1 });
  for (let i = 1; i <= 4; i++) {
    assert.deepEqual(await stateOf(`s-${i}`), { state: "succeeded", attempts: 1, code: null });
    assert.equal(calls.slice(before).filter((c) => c.body.includes(`"order-s-${i}"`)).length, 1, `s-${i} ran once`);
  }
  assert.deepEqual(await stateOf("s-0"), { state: "succeeded", attempts: 2, code: null });
});

// One budget for the whole handler run, not 45 s per fetch try.
test("a handler run has one time budget: a service that never answers is a timeout at the budget, retried later", { timeout: 10000 }, async () => {
  await keepForOpenRefund("b", 1);
  let release;
  holds.set('order-b-0"', new Promise((r) => (release = r)));
  try {
    const rep = await jadpoWorker(planOf(), { handlerTimeoutMs: 300 }).deliver(env(db));
    assert.deepEqual(rep, { claimed: 1, succeeded: 0, retried: 1, failed: 0, lost: 0 });
  } finally {
    release();
  }
  assert.deepEqual(await stateOf("b-0"), { state: "retry_wait", attempts: 1, code: "timeout" });
  assert.throws(() => jadpoWorker(planOf(), { handlerTimeoutMs: LEASE_MS }), /shorter than the lease/);
  await db.prepare(`DELETE FROM jadpo_deliveries WHERE outbox_id IN (SELECT id FROM jadpo_outbox WHERE received_id = 'b-0')`).run();
});

// Issue 24: runHandler went through JSON.parse, and 9007199254740993 left as ...992.
test("an Int of 2^63-1 in an event reaches the subscriber as the digits that came in", async () => {
  const body = ret("r-50").replace('"SKU-1":2', '"SKU-1":9223372036854775807,"SKU-2":9007199254740993');
  const before = calls.length;
  const r = await worker.queue("returns", [msg(body)]);
  assert.equal(r.explicitAcks.length, 1);
  await settled();
  const sent = calls.slice(before).filter((c) => c.body.includes("order-r-50"));
  assert.equal(sent.length, 1);
  assert.match(sent[0].body, /"items":\{"SKU-1":9223372036854775807,"SKU-2":9007199254740993\}/);
});

// The plan's literals went through JSON.parse (worker.mjs held the plan as a
// JavaScript object): a setting, an argument or a default beyond 2^53 went
// out rounded. The plan is handed over as its text, as worker.mjs holds it.
test("literals beyond 2^53 in the plan, a config default and a Decimal variable reach the subscriber as their digits", async () => {
  const plan = planOf();
  const conn = plan.connections.find((c) => c.name === "refunds");
  const op = conn.operations.find((o) => o.ref === "refunds.open_refund");
  op.path = op.path + "/{account}";
  conn.settings.account = { literal: "@BIG_SETTING@" };
  plan.config.push({ name: "big_default", binding: "BIG_DEFAULT", type: { kind: "int" }, default: "@BIG_DEFAULT@" },
    { name: "ratio", binding: "RATIO", type: { kind: "decimal" } });
  // Numbers go out only where the input declares numbers (wire.Encode).
  const numeric = { order_id: { kind: "decimal" }, customer_email: { kind: "int" }, items: { kind: "decimal" } };
  const rec = plan.records.find((r) => r.id === op.input.name);
  rec.fields = rec.fields.map((f) => (numeric[f.name] ? { ...f, type: numeric[f.name] } : f));
  const sub = plan.subscribers.find((s) => s.name === "open_refund");
  const step = sub.handlers[0].steps[0];
  step.args.order_id = { literal: "@BIG_LITERAL@" };
  step.args.customer_email = { config: "big_default" };
  step.args.items = { config: "ratio" };
  const text = JSON.stringify(plan, null, 2).replace('"@BIG_SETTING@"', "123456789012345678901")
    .replace('"@BIG_DEFAULT@"', "9007199254740993").replace('"@BIG_LITERAL@"', "-123456789012345678901.50");
  await keepForOpenRefund("lit", 1);
  const before = calls.length;
  const rep = await jadpoWorker(text).deliver({ ...env(db), RATIO: "0.10000000000000000001" });
  assert.deepEqual(rep, { claimed: 1, succeeded: 1, retried: 0, failed: 0, lost: 0 });
  const sent = calls.slice(before);
  assert.equal(sent.length, 1);
  assert.match(sent[0].url, /\/123456789012345678901$/);
  const body = sent[0].body;
  assert.match(body, /"order_id":-123456789012345678901\.50[,}]/);
  assert.match(body, /"customer_email":9007199254740993[,}]/);
  assert.match(body, /"items":0\.10000000000000000001[,}]/);
});

// Issue 24: a body JSON cannot hold was acknowledged and parked as one
// empty row for all of them.
test("two v8 bodies JSON cannot hold: neither is acknowledged unkept; the dead-letter consumer parks each under its own message id", async () => {
  const obj = JSON.parse(ret("r-70"));
  const cycle = { ...obj };
  cycle.self = cycle;
  const batch = [msg({ ...obj, return_id: 70n }), msg(cycle), msg(new Map([["return_id", "r-71"]]))];
  const r = await worker.queue("returns", batch);
  assert.deepEqual(acked(r), []);
  assert.deepEqual(retried(r), batch.map((m) => m.id).sort());
  const last = (await db.prepare("SELECT max(id) AS id FROM jadpo_parked_messages").first()).id;
  const dead = batch.map((m) => ({ ...m, attempts: 4 }));
  const d = await worker.queue("returns-dlq", dead);
  assert.deepEqual(acked(d), batch.map((m) => m.id).sort());
  const parked = (await db.prepare("SELECT reason, problems, CAST(body AS TEXT) AS body FROM jadpo_parked_messages WHERE id > ?1 ORDER BY id").bind(last).all()).results;
  assert.deepEqual(parked, [
    { reason: "unreadable", problems: '[{"field":"","rule":"json"}]', body: `Cloudflare message ${batch[0].id}: its body has no JSON text (a BigInt)` },
    { reason: "unreadable", problems: '[{"field":"","rule":"json"}]', body: `Cloudflare message ${batch[1].id}: its body has no JSON text (a cycle)` },
    { reason: "unreadable", problems: '[{"field":"","rule":"json"}]', body: `Cloudflare message ${batch[2].id}: its body has no JSON text (a Map)` },
  ]);
  // The dead-letter queue offering them again parks nothing more.
  await worker.queue("returns-dlq", dead.map((m) => ({ ...m, attempts: 5 })));
  assert.equal(await count("jadpo_parked_messages", `id > ${last}`), 3);
  assert.equal(await count("jadpo_received_events", "received_id IN ('r-70','70','r-71')"), 0);
});

// Issue 24: the outbox row took the column's default 0.
test("an outbox row's settled_at is NULL while its deliveries remain", async () => {
  await worker.queue("returns", [msg(ret("r-60"))]);
  const row = await db.prepare("SELECT settled_at FROM jadpo_outbox WHERE received_id = 'r-60'").first();
  assert.deepEqual(row, { settled_at: null });
  await settled();
  assert.equal((await db.prepare("SELECT settled_at FROM jadpo_outbox WHERE received_id = 'r-60'").first()).settled_at, null);
});

// Issue 24: the dead-letter consumer had max_retries = 3 and no queue
// behind it, so a D1 outage of minutes lost its messages.
test("the dead-letter consumer's retries in wrangler.toml outlast a D1 outage of hours", () => {
  const dlq = wrangler.slice(wrangler.indexOf('queue = "returns-dlq"\nmax_batch_size'));
  assert.match(dlq, /^queue = "returns-dlq"\nmax_batch_size = 10\nmax_retries = 100\nretry_delay = 1800\n/);
  assert.match(wrangler, /queue = "returns"\nmax_batch_size = 10\nmax_retries = 3\ndead_letter_queue = "returns-dlq"\n/);
});

// Without a dead-letter queue nothing parks a body JSON cannot hold later:
// the queue's last delivery (after max_retries) parks it.
test("without a dead-letter queue, a body JSON cannot hold is parked on its last delivery, not before", async () => {
  const plan = planOf();
  for (const c of plan.connections) if (c.settings) delete c.settings.dead_letter_queue;
  const w = jadpoWorker(plan);
  const body = { ...JSON.parse(ret("r-80")), big: 80n };
  const offer = async (attempts) => {
    const m = { id: "msg-no-dlq", body, attempts, timestamp: new Date(), done: [] };
    m.ack = () => m.done.push("ack");
    m.retry = () => m.done.push("retry");
    const waits = [];
    await w.queue({ queue: "returns", messages: [m] }, env(db), { waitUntil: (p) => waits.push(p) });
    await Promise.all(waits);
    return m.done;
  };
  const like = "CAST(body AS TEXT) LIKE 'Cloudflare message msg-no-dlq:%'";
  assert.deepEqual(await offer(1), ["retry"]);
  assert.deepEqual(await offer(3), ["retry"]);
  assert.equal(await count("jadpo_parked_messages", like), 0);
  assert.deepEqual(await offer(4), ["ack"]); // max_retries = 3: the fourth delivery is the last
  assert.equal(await count("jadpo_parked_messages", like), 1);
});

// D1 refusing every settlement: deliver says so instead of waiting on it,
// and the delivery is left to its lease (claimed again once it ends).
test("settlements D1 cannot write: deliver fails with the error, the delivery stays running for its lease", { timeout: 10000 }, async () => {
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  await keepForOpenRefund("u", 1);
  const down = () => { throw new Error("D1_ERROR: injected: settlements refused"); };
  const binding = {
    prepare: (q) => {
      const st = db.prepare(q);
      if (q !== SQL.settle) return st;
      return { bind: () => ({ run: async () => down() }) };
    },
    batch: async () => down(),
  };
  await assert.rejects(jadpoWorker(planOf()).deliver(env(binding)), /settlements refused/);
  assert.deepEqual(await stateOf("u-0"), { state: "running", attempts: 1, code: null });
  await db.prepare(`DELETE FROM jadpo_deliveries WHERE outbox_id IN (SELECT id FROM jadpo_outbox WHERE received_id = 'u-0')`).run();
});

// A retry_safe operation gets three tries without an answer, all inside the
// run's one budget: a try that hangs spends the budget, and no try follows.
test("a retry_safe call: three tries without an answer, and all of them inside the run's one budget", { timeout: 10000 }, async () => {
  const plan = planOf();
  const op = plan.connections.find((c) => c.name === "refunds").operations.find((o) => o.ref === "refunds.open_refund");
  op.retry_safe = true;
  await keepForOpenRefund("t", 2);
  const before = calls.length;
  drops.add('order-t-0"');
  let release;
  holds.set('order-t-1"', new Promise((r) => (release = r)));
  try {
    const rep = await jadpoWorker(plan, { handlerTimeoutMs: 1500 }).deliver(env(db));
    assert.deepEqual(rep, { claimed: 2, succeeded: 0, retried: 2, failed: 0, lost: 0 });
  } finally {
    drops.clear();
    release();
  }
  const tries = (id) => calls.slice(before).filter((c) => c.body.includes(`"order-${id}"`)).length;
  assert.deepEqual(await stateOf("t-0"), { state: "retry_wait", attempts: 1, code: "transport" });
  assert.equal(tries("t-0"), 3);
  assert.deepEqual(await stateOf("t-1"), { state: "retry_wait", attempts: 1, code: "timeout" });
  assert.equal(tries("t-1"), 1, "the budget is the run's, not each try's");
  const lastError = async (id) => (await db.prepare(`SELECT d.last_error AS e FROM jadpo_deliveries d
    JOIN jadpo_outbox o ON o.id = d.outbox_id WHERE o.received_id = ?1`).bind(id).first()).e;
  assert.equal(await lastError("t-0"), "refunds.open_refund: no answer after 3 attempt(s): the connection failed");
  assert.equal(await lastError("t-1"), "refunds.open_refund: no answer after 1 attempt(s): the time budget ran out");
  await db.prepare(`DELETE FROM jadpo_deliveries WHERE outbox_id IN (SELECT id FROM jadpo_outbox WHERE received_id IN ('t-0','t-1'))`).run();
});

const rowOf = async (id) => db.prepare(`SELECT d.state, d.attempts, d.handler_started FROM jadpo_deliveries d
  JOIN jadpo_outbox o ON o.id = d.outbox_id WHERE o.received_id = ?1`).bind(id).first();
const onlyAttempt = (id) => db.prepare(`UPDATE jadpo_deliveries SET max_attempts = 1
  WHERE outbox_id IN (SELECT id FROM jadpo_outbox WHERE received_id = ?1)`).bind(id).run();

// A claim counted its attempt whether or not its handler ran: a claim
// abandoned before its handler started (its events unread, the invocation
// ended) spent one, and with max_attempts 1 the delivery failed
// lease_expired without ever running. As the native store: a claim that
// never ran is not an attempt (docs/design/store.md).
test("a claim abandoned before its handler started is no attempt: taken again after its lease, it runs as attempt 1 of 1", { timeout: 10000 }, async () => {
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  await keepForOpenRefund("ns", 1);
  await onlyAttempt("ns-0");
  let t = Date.now();
  const clock = () => t;
  // The claim is made, and its events cannot be read: nothing runs.
  const unread = {
    prepare: (q) => q !== SQL.claimedEvents ? db.prepare(q) : { bind: () => ({ all: async () => { throw new Error("D1_ERROR: injected: the events unread"); } }) },
    batch: (stmts) => db.batch(stmts),
  };
  const before = calls.length;
  await assert.rejects(jadpoWorker(planOf(), { now: clock }).deliver(env(unread)), /the events unread/);
  assert.deepEqual(await rowOf("ns-0"), { state: "running", attempts: 1, handler_started: 0 });
  // Past the lease, the next invocation takes it again as the same attempt
  // and, that being its last, writes its start before the call (however
  // slow that write).
  t += LEASE_MS + 1000;
  let release;
  holds.set('order-ns-0"', new Promise((r) => (release = r)));
  const { binding } = counting(db, 0, async (kinds) => {
    if (kinds.includes("start")) await new Promise((r) => setTimeout(r, 200));
  });
  const run = jadpoWorker(planOf(), { now: clock }).deliver(env(binding));
  try {
    await until(async () => calls.length > before, "the handler's call");
    assert.deepEqual(await rowOf("ns-0"), { state: "running", attempts: 1, handler_started: 1 }, "the last attempt's start is written before its call");
  } finally {
    release();
  }
  assert.deepEqual(await run, { claimed: 1, succeeded: 1, retried: 0, failed: 0, lost: 0 });
  assert.deepEqual(await stateOf("ns-0"), { state: "succeeded", attempts: 1, code: null });
  assert.equal(calls.length - before, 1);
});

test("a claim whose handler started is an attempt: taken over mid-run on max_attempts 1, it fails lease_expired and nothing runs again", { timeout: 10000 }, async () => {
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  await keepForOpenRefund("hs", 1);
  await onlyAttempt("hs-0");
  let t = Date.now();
  const clock = () => t;
  let release;
  holds.set('order-hs-0"', new Promise((r) => (release = r)));
  const before = calls.length;
  const run = jadpoWorker(planOf(), { now: clock }).deliver(env(db));
  try {
    await until(async () => calls.length > before, "the handler's call");
    assert.deepEqual(await rowOf("hs-0"), { state: "running", attempts: 1, handler_started: 1 });
    t += LEASE_MS + 1000;
    const later = await jadpoWorker(planOf(), { now: clock }).deliver(env(db));
    assert.deepEqual(later, { claimed: 1, succeeded: 0, retried: 0, failed: 1, lost: 0 });
  } finally {
    release();
  }
  assert.deepEqual(await run, { claimed: 1, succeeded: 0, retried: 0, failed: 0, lost: 1 });
  assert.deepEqual(await stateOf("hs-0"), { state: "failed", attempts: 2, code: "lease_expired" });
  assert.equal(calls.length - before, 1, "the handler ran once");
});

// The Worker wrote "no answer after 0 attempt(s)" for a run whose budget was
// gone before its first try; the native client counts that try.
test("a last attempt whose start took the whole budget sends nothing: a timeout after 1 attempt, as natively", { timeout: 10000 }, async () => {
  assert.equal(await count("jadpo_deliveries", "state IN ('pending','retry_wait','running')"), 0, "nothing else is due");
  await keepForOpenRefund("bs", 1);
  await onlyAttempt("bs-0");
  // The start's write takes longer than the run's budget and half the lease's margin.
  const { binding } = counting(db, 0, async (kinds) => {
    if (kinds.includes("start")) await new Promise((r) => setTimeout(r, 500));
  });
  const before = calls.length;
  const rep = await jadpoWorker(planOf(), { leaseMs: 400, handlerTimeoutMs: 300 }).deliver(env(binding));
  assert.deepEqual(rep, { claimed: 1, succeeded: 0, retried: 0, failed: 1, lost: 0 });
  assert.equal(calls.length - before, 0, "nothing was sent");
  assert.deepEqual(await stateOf("bs-0"), { state: "failed", attempts: 1, code: "timeout" });
  const e = await db.prepare(`SELECT d.last_error AS e FROM jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id
    WHERE o.received_id = 'bs-0'`).first();
  assert.equal(e.e, "refunds.open_refund: no answer after 1 attempt(s): the time budget ran out");
});

// The Worker wrote "input member order_id has no value"; the native
// wire.DecodeError names the operation and the field's whole path. It sent
// a value of the wrong kind, and a member the input does not declare, to
// the service, which the native wire.Encode refuses.
test("an argument without a value, of the wrong kind or not declared is input_invalid, worded as natively, at its whole path; nothing is sent", async () => {
  const cases = [
    { id: "iv-a", args: { order_id: { path: ["no_such_field"] } }, text: "refunds.open_refund: input does not fit its shape at order_id: required" },
    { id: "iv-b", args: { items: { record: { "SKU-1": { path: ["no_such_field"] } } } }, text: "refunds.open_refund: input does not fit its shape at items.SKU-1: required" },
    { id: "iv-c", args: { order_id: { path: ["items"] } }, text: "refunds.open_refund: input does not fit its shape at order_id: type" },
    { id: "iv-d", args: { items: { record: { "SKU-1": { literal: "two" } } } }, text: "refunds.open_refund: input does not fit its shape at items.SKU-1: type" },
    { id: "iv-e", args: { colour: { literal: "red" } }, text: "refunds.open_refund: input does not fit its shape at colour: unknown" },
  ];
  for (const c of cases) {
    const plan = planOf();
    Object.assign(plan.subscribers.find((s) => s.name === "open_refund").handlers[0].steps[0].args, c.args);
    await keepForOpenRefund(c.id, 1);
    const before = calls.length;
    const rep = await jadpoWorker(plan).deliver(env(db));
    assert.deepEqual(rep, { claimed: 1, succeeded: 0, retried: 0, failed: 1, lost: 0 });
    assert.equal(calls.length - before, 0);
    assert.deepEqual(await stateOf(`${c.id}-0`), { state: "failed", attempts: 1, code: "input_invalid" });
    const e = await db.prepare(`SELECT d.last_error AS e FROM jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id
      WHERE o.received_id = ?1`).bind(`${c.id}-0`).first();
    assert.equal(e.e, c.text);
  }
});
