// Refusal codes as the native wire package names them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { toLowerSnake, isTemporary, isCredentialRefusal, credentialFields } from "../jadpo.mjs";

test("codes in lower_snake_case, as wire.ToLowerSnake writes them", () => {
  for (const [in_, out] of [["RequestThrottled", "request_throttled"], ["request-throttled", "request_throttled"],
    ["AWS.SimpleQueueService.NonExistentQueue", "aws_simple_queue_service_non_existent_queue"], ["HTTPError", "http_error"], ["", ""]]) {
    assert.equal(toLowerSnake(in_), out, in_);
  }
});

test("temporary: 5xx, 429, and codes that say so", () => {
  assert.equal(isTemporary(503, "x"), true);
  assert.equal(isTemporary(429, "x"), true);
  assert.equal(isTemporary(400, "request_throttled"), true);
  assert.equal(isTemporary(400, "service_unavailable"), true);
  assert.equal(isTemporary(404, "not_found"), false);
});

test("a refusal of the credential: 401, 403, or AWS's codes, as wire.IsCredentialRefusal", () => {
  assert.equal(isCredentialRefusal(401, "http_401"), true);
  assert.equal(isCredentialRefusal(403, "code_10000"), true);
  assert.equal(isCredentialRefusal(400, "invalid_signature_exception"), true);
  assert.equal(isCredentialRefusal(400, "unrecognized_client_exception"), true);
  assert.equal(isCredentialRefusal(400, "expired_token"), true);
  assert.equal(isCredentialRefusal(400, "refund_refused"), false);
  assert.equal(isCredentialRefusal(404, "http_404"), false);
});

test("the credential's config fields, by name, sorted and once each", () => {
  assert.deepEqual(credentialFields({ credential: { token: { config: "cf_token" } } }), ["cf_token"]);
  assert.deepEqual(credentialFields({ credential: { b: { config: "z" }, a: { config: "a" }, c: { config: "z" }, d: { literal: "x" } } }), ["a", "z"]);
  assert.deepEqual(credentialFields({}), []);
});
