// The plan as worker.mjs holds it (its JSON text), read with its literals
// exact: JSON.parse rounded a number beyond 2^53 in a setting, an argument or
// a config default (123456789012345678901 went out as 123456789012345680000).
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSONNumber, encodeJSON, readPlan } from "../jadpo.mjs";

test("readPlan keeps the digits of every literal and default; the plan's other numbers are numbers", () => {
  const p = readPlan(`{"version": 1, "config": [{"name": "n", "default": 9007199254740993}],
    "connections": [{"settings": {"account": {"literal": 123456789012345678901}, "ratio": {"literal": 1.50}}}],
    "subscribers": [{"retry": {"max_attempts": 5}, "handlers": [{"steps": [{"args": {"x": {"literal": -98765432109876543210},
      "r": {"record": {"__proto__": {"literal": 7}}}}}]}]}]}`);
  assert.equal(p.version, 1);
  assert.equal(p.subscribers[0].retry.max_attempts, 5);
  const exact = (v, text) => {
    assert.ok(v instanceof JSONNumber, `${text} is a JSONNumber`);
    assert.equal(encodeJSON(v), text);
  };
  exact(p.config[0].default, "9007199254740993");
  exact(p.connections[0].settings.account.literal, "123456789012345678901");
  assert.equal(String(p.connections[0].settings.account.literal), "123456789012345678901");
  exact(p.connections[0].settings.ratio.literal, "1.50");
  const args = p.subscribers[0].handlers[0].steps[0].args;
  exact(args.x.literal, "-98765432109876543210");
  // A member named __proto__ is a member, not the object's prototype.
  assert.ok(Object.hasOwn(args.r.record, "__proto__"));
  exact(args.r.record["__proto__"].literal, "7");
  // What JSON.parse gives instead.
  assert.equal(String(JSON.parse('{"literal": 123456789012345678901}').literal), "123456789012345680000");
});

test("readPlan refuses text that is not JSON", () => {
  assert.throws(() => readPlan("{\"version\": 1,}"), /not JSON/);
});
