// Refusal codes as the native wire package names them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { toLowerSnake, isTemporary } from "../jadpo.mjs";

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
