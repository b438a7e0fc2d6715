// The shared reading table (testdata/reading/table.json), run against the
// Worker's reader: the same outcome and the same bytes as runtime/reading's
// TestReadingTable, case for case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Reader, readBody, bodyOf } from "../jadpo.mjs";

const tablePath = fileURLToPath(new URL("../../../testdata/reading/table.json", import.meta.url));
const table = JSON.parse(readFileSync(tablePath, "utf8"));

// bytesOf expands a body as the table writes it: a text, {hex}, or parts.
export function bytesOf(b) {
  if (typeof b === "string") return new TextEncoder().encode(b);
  if (!Array.isArray(b)) return Uint8Array.from(Buffer.from(b.hex, "hex"));
  const parts = b.map((p) => (typeof p === "string" ? p : p.repeat.repeat(p.times)));
  return new TextEncoder().encode(parts.join(""));
}

const readers = new Map(table.plan.queues.map((q) => [q.name, new Reader(table.plan, q)]));

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// Each case as the `bytes` content type hands it over (an ArrayBuffer), and,
// when its bytes are UTF-8, as the `text` content type does (a string).
for (const c of table.cases) {
  const body = bytesOf(c.body);
  const kinds = [["bytes", body.slice().buffer]];
  try {
    kinds.push(["text", strict.decode(body)]);
  } catch {}
  for (const [kind, given] of kinds) test(`${c.name} (${kind})`, () => {
    const r = readers.get(c.queue);
    const o = readBody(r, bodyOf(given));
    const exp = c.kept || c.parked;
    const got = {
      park: o.park, reason: o.reason || undefined, problems: o.problems || undefined,
      id: o.id || undefined, wire_type: o.wireType || undefined, event: o.event ? o.event.name : undefined,
      json: o.eventJSON === null ? undefined : Buffer.from(o.eventJSON, "utf8").toString("hex"),
    };
    const want = {
      park: !!c.parked, reason: exp.reason, problems: exp.problems, id: exp.id,
      wire_type: exp.wire_type || undefined, event: exp.event,
      json: exp.json === undefined ? undefined : Buffer.from(bytesOf(exp.json)).toString("hex"),
    };
    assert.deepEqual(got, want);
  });
}

test("the table holds every case the issue names", () => {
  assert.ok(table.cases.length >= 190);
});
