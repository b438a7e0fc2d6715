// The shared delivery table (testdata/delivery/table.json), run against the
// Worker's engine: the same lease, handler budget, transport tries and
// pauses, attempt budget, backoff and jitter bounds, and settlement order as
// the native engine's (runtime's TestDeliveryTable, providers/wire's
// TestDeliveryTableTransport), case for case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  HANDLER_TIMEOUT_MS, LEASE_MS, REQUEST_TIMEOUT_MS, TRANSPORT_TRIES,
  MAX_ERROR_TEXT, attemptBudget, backoffDraw, deliveryErrors, errorText, inputBody, keptEvent, readPlan, runsHandler, settlementOf, startsGated,
  stepArgs, transportPause,
} from "../jadpo.mjs";

const tablePath = fileURLToPath(new URL("../../../testdata/delivery/table.json", import.meta.url));
const table = JSON.parse(readFileSync(tablePath, "utf8"));
// The inputs' literals as the Worker reads its plan's: numbers exactly.
const planned = readPlan(readFileSync(tablePath, "utf8"));

test("engine: lease, handler budget, request timeout, transport tries", () => {
  assert.deepEqual(
    { lease_ms: LEASE_MS, handler_timeout_ms: HANDLER_TIMEOUT_MS, request_timeout_ms: REQUEST_TIMEOUT_MS, transport_tries: TRANSPORT_TRIES },
    table.engine);
  assert.ok(table.engine.handler_timeout_ms < table.engine.lease_ms);
});

for (const c of table.transport_pause) {
  test(`transport pause after try ${c.after_try}`, () => assert.equal(transportPause(c.after_try), c.ms));
}

for (const c of table.budget) {
  test(`budget: ${c.name}`, () => assert.equal(attemptBudget(c.stored, c.subscriber), c.budget));
}

// The highest value Math.random can give.
const top = () => 1 - 2 ** -53;

for (const c of table.backoff) {
  test(`backoff: ${c.name}`, () => {
    const r = { max_attempts: 1000, first_delay_ms: c.first_delay_ms, max_delay_ms: c.max_delay_ms };
    // Full jitter: both ends of [0, ceiling] can be drawn, nothing beyond.
    assert.equal(backoffDraw(r, c.attempt, () => 0), 0);
    assert.equal(backoffDraw(r, c.attempt, top), c.ceiling_ms);
  });
}

for (const c of table.settle) {
  test(`settle: ${c.name}`, () => {
    const err = { ok: null, temporary: { code: "unavailable", temporary: true }, permanent: { code: "refused", temporary: false } }[c.result ?? "ok"];
    const s = settlementOf(c.attempt, c.budget, c.handler, err);
    assert.equal(s.state, c.state);
    if (c.code) assert.equal(s.code, c.code);
    // The Worker runs the handler only when the native engine does.
    assert.equal(runsHandler(c.attempt, c.budget, c.handler) ? 1 : 0, c.calls ?? 1);
  });
}

// The last error's text, as the native store keeps it (sqlcommon.ErrorText).
test("errorText: none is NULL; cut to 1 KiB of UTF-8 at a character; NULs left out; a lone surrogate is U+FFFD", () => {
  assert.equal(MAX_ERROR_TEXT, 1024); // store.MaxErrorText
  assert.equal(errorText(null), null);
  assert.equal(errorText(""), null);
  assert.equal(errorText("a\0b"), "ab");
  assert.equal(errorText("x\ud800y"), "x\ufffdy");
  const long = "a".repeat(1022) + "é€";
  assert.equal(errorText(long), "a".repeat(1022) + "é"); // é is 2 bytes: 1024; € would pass it
  assert.equal(errorText("a".repeat(1023) + "😀"), "a".repeat(1023));
  assert.equal(new TextEncoder().encode(errorText("€".repeat(500))).length, 1023);
});

// The Worker waits for a handler's start to be written on the delivery's
// last attempt only, as the native engine (runtime/deliver.go).
test("a handler's start is awaited on the last attempt only", () => {
  assert.equal(startsGated(1, 5), false);
  assert.equal(startsGated(4, 5), false);
  assert.equal(startsGated(5, 5), true);
  assert.equal(startsGated(1, 1), true);
});

// A failure's last_error text, code and kind, as the native runtime's
// (runtime's TestDeliveryTableErrors builds Go's errors for the same cases).
for (const c of table.errors) {
  test(`error: ${c.name}`, () => {
    let e;
    switch (c.error) {
      case "refused": e = deliveryErrors.refused(c.operation, c.refusal_code, c.status, c.credential_fields ?? []); break;
      case "no_answer": e = deliveryErrors.noAnswer(c.operation, c.attempts, c.timed_out); break;
      case "input_unfit": e = deliveryErrors.inputUnfit(c.operation, c.path, c.rule); break;
      case "handler_missing": e = deliveryErrors.handlerMissing(c.subscriber, c.event); break;
      case "event_not_json":
        assert.throws(() => keptEvent(c.event_json), (x) => (e = x, true));
        break;
      default: assert.fail(`the table's error ${c.error} is unknown here`);
    }
    if (c.text) assert.equal(e.message, c.text);
    if (c.text_before_cause) {
      assert.ok(e.message.startsWith(c.text_before_cause) && e.message.length > c.text_before_cause.length,
        `${JSON.stringify(e.message)}: the table says ${JSON.stringify(c.text_before_cause)} and a cause`);
    }
    // The code and the kind as the settlement reads them: with attempts
    // left, a temporary failure waits and any other fails.
    const s = c.error === "handler_missing" ? settlementOf(1, 2, false, null) : settlementOf(1, 2, true, e);
    assert.equal(s.code, c.code);
    assert.equal(s.state, c.temporary ? "retry_wait" : "failed");
  });
}

// An operation's input as the handler's step computes and writes it, as the
// native runtime's (runtime's TestDeliveryTableInputs runs the same cases
// through a delivery): sent as exactly the case's body, or refused with its
// text and code before anything is sent.
const inputPlan = { records: planned.input_records, config: [] };
for (const c of planned.inputs) {
  test(`input: ${c.name}`, () => {
    const op = { ref: "jobs.create_job", input: planned.input_type };
    const body = () => inputBody(inputPlan, op, stepArgs(inputPlan, {}, { args: c.args }, keptEvent(c.event_json), c.event_json));
    if (c.body !== undefined) {
      assert.equal(body(), c.body);
      return;
    }
    let e;
    assert.throws(body, (x) => (e = x, true));
    assert.equal(e.message, c.text);
    const s = settlementOf(1, 2, true, e);
    assert.equal(s.code, c.code);
    assert.equal(s.state, c.temporary ? "retry_wait" : "failed");
  });
}

test("the table holds cases of each rule", () => {
  for (const k of ["transport_pause", "budget", "backoff", "settle", "errors", "inputs"]) assert.ok(table[k].length > 0, k);
  const rules = new Set(table.inputs.map((c) => (c.text ? c.text.slice(c.text.lastIndexOf(": ") + 2) : "fits")));
  for (const r of ["fits", "type", "unknown", "required"]) assert.ok(rules.has(r), r);
  const kinds = new Set(table.errors.map((c) => c.error));
  for (const k of ["refused", "no_answer", "input_unfit", "handler_missing", "event_not_json"]) assert.ok(kinds.has(k), k);
});
