// The jadpo Worker's runtime library: it interprets the plan (build/plan.json's
// program), so the Worker is this file followed by the plan. It does what the
// native runtime does for one batch (runtime.md §3; docs/design/workers.md):
//
//   - reads each message as runtime/reading does (docs/design/reading.md): the same
//     outcome and the same canonical bytes for every body, which the shared
//     table testdata/reading/table.json holds both runtimes to;
//   - keeps the batch in one D1 batch() — received id, outbox row, a pending
//     delivery per subscriber; a repeat keeps nothing — and parks what cannot
//     be read once per queue and body, then acknowledges each message;
//   - retries (message.retry()) what D1 cannot take now, so max_retries and
//     the dead-letter queue take one that keeps failing; keeps what arrives
//     from a dead-letter queue as from its queue (its consumer retries for
//     about two days); a body JSON cannot hold (v8) is retried, then parked
//     by the dead-letter consumer under its message id;
//   - runs due deliveries right after a batch and from the cron trigger, with
//     the native engine's leases, fencing, backoff and give-up (runtime/deliver.go):
//     one time budget per handler run, each delivery settled as it finishes,
//     each handler's start written as natively (a claim that never ran is
//     not an attempt), an event's numbers sent as the digits kept, an
//     operation's input written by its type or refused as wire.Encode does,
//     each failure worded as natively; the shared table
//     testdata/delivery/table.json holds the rules both engines have equal.
//
// Plain ES2022 with Web APIs only (TextDecoder, crypto.subtle, fetch): it runs
// in workerd and in Node.js 20, where its reader is tested without workerd.

import { emailRefuses, withConfigCheck } from "./config.mjs";

// ---------------------------------------------------------------- reading

export const MAX_EVENT_BYTES = 65536;
export const MAX_PROBLEMS = 100;
const MAX_KEY_IN_PATH = 256;
const MAX_DEPTH = 128;

const utf8 = new TextEncoder();
const strictUTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

// compareBytes orders texts by their UTF-8 bytes, as Go's strings.Compare
// does: that is code point order, which UTF-16 unit order is not.
export function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i), y = b.codePointAt(i);
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

class NotJSON extends Error {}

// InputUnfit is an operation's input that does not fit its shape, at a
// dotted path of field names (wire.DecodeError with Input set).
class InputUnfit extends Error {
  constructor(path, rule) {
    super(`input does not fit its shape at ${path}: ${rule}`);
    this.path = path;
    this.rule = rule;
  }
}

// parse reads one strict RFC 8259 value (docs/design/reading.md, "What counts as
// JSON"): duplicate names refused after unescaping, escaped lone surrogates
// and raw control characters refused, nesting to 128, numbers as their text.
// Nodes: {k: "obj", members: [[name, node]...], byName: Map} | {k: "arr", items}
// | {k: "str", v} | {k: "num", v: text} | {k: "true"} | {k: "false"} | {k: "null"}.
// maxDepth is a message's MAX_DEPTH; the plan (readPlan) is read deeper.
function parse(text, maxDepth = MAX_DEPTH) {
  let i = 0;
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else return;
    }
  };
  const fail = () => { throw new NotJSON(); };
  const str = () => {
    i++; // the opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) { out += text.slice(start, i); i++; return out; }
      if (c < 0x20) fail();
      if (c !== 0x5c) { i++; continue; }
      out += text.slice(start, i);
      const e = text[i + 1];
      i += 2;
      switch (e) {
        case '"': out += '"'; break;
        case "\\": out += "\\"; break;
        case "/": out += "/"; break;
        case "b": out += "\b"; break;
        case "f": out += "\f"; break;
        case "n": out += "\n"; break;
        case "r": out += "\r"; break;
        case "t": out += "\t"; break;
        case "u": {
          const hi = hex4();
          if (hi >= 0xdc00 && hi <= 0xdfff) fail();
          if (hi >= 0xd800 && hi <= 0xdbff) {
            if (text[i] !== "\\" || text[i + 1] !== "u") fail();
            i += 2;
            const lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail();
            out += String.fromCharCode(hi, lo);
          } else {
            out += String.fromCharCode(hi);
          }
          break;
        }
        default: fail();
      }
      start = i;
    }
  };
  const hex4 = () => {
    const h = text.slice(i, i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) fail();
    i += 4;
    return parseInt(h, 16);
  };
  const numRe = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const value = (depth) => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (depth + 1 > maxDepth) fail();
      i++;
      ws();
      if (c === "[") {
        const items = [];
        if (text[i] === "]") { i++; return { k: "arr", items }; }
        for (;;) {
          items.push(value(depth + 1));
          ws();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "]") { i++; return { k: "arr", items }; }
          fail();
        }
      }
      const members = [];
      const byName = new Map();
      if (text[i] === "}") { i++; return { k: "obj", members, byName }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const name = str();
        ws();
        if (text[i] !== ":") fail();
        i++;
        const v = value(depth + 1);
        if (byName.has(name)) fail();
        byName.set(name, v);
        members.push([name, v]);
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return { k: "obj", members, byName }; }
        fail();
      }
    }
    if (c === '"') return { k: "str", v: str() };
    if (c === "t" && text.startsWith("true", i)) { i += 4; return { k: "true" }; }
    if (c === "f" && text.startsWith("false", i)) { i += 5; return { k: "false" }; }
    if (c === "n" && text.startsWith("null", i)) { i += 4; return { k: "null" }; }
    numRe.lastIndex = i;
    const m = numRe.exec(text);
    if (!m || m[0].length === 0) fail();
    i += m[0].length;
    return { k: "num", v: m[0] };
  };
  const root = value(0);
  ws();
  if (i !== text.length) fail();
  return root;
}

// dec is a number as sign, significant digits and exponent, compared exactly
// without building it (docs/design/reading.md, "min / max").
function parseDec(s) {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]+))?$/.exec(s);
  const neg = m[1] === "-";
  const frac = m[3] || "";
  let digits = m[2] + frac;
  let e = 0n;
  if (m[5] !== undefined) {
    e = BigInt(m[5]);
    if (m[4] === "-") e = -e;
  }
  digits = digits.replace(/^0+/, "");
  const trimmed = digits.replace(/0+$/, "");
  e += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  e -= BigInt(frac.length);
  if (digits === "") return { neg: false, digits: "", exp: 0n };
  return { neg, digits, exp: e };
}

function cmpDec(a, b) {
  const sa = a.digits === "" ? 0 : a.neg ? -1 : 1;
  const sb = b.digits === "" ? 0 : b.neg ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  const pa = BigInt(a.digits.length) + a.exp, pb = BigInt(b.digits.length) + b.exp;
  let c = pa < pb ? -1 : pa > pb ? 1 : a.digits < b.digits ? -1 : a.digits > b.digits ? 1 : 0;
  return sa < 0 ? -c : c;
}

const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n;

// wholeNumber is a number's value when it is whole and within int64, as a
// BigInt; else null.
function wholeNumber(s) {
  const d = parseDec(s);
  if (d.digits === "") return 0n;
  if (d.exp < 0n || BigInt(d.digits.length) + d.exp > 19n) return null;
  let v = BigInt(d.digits) * 10n ** d.exp;
  if (d.neg) v = -v;
  return v < INT64_MIN || v > INT64_MAX ? null : v;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

// atext of RFC 5322 as Go's net/mail reads it: printable ASCII but the
// specials, and any character beyond ASCII.
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+$/u;
function dotAtom(s) {
  return s !== "" && s.split(".").every((a) => ATOM.test(a));
}
function ipv4(s) {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}

// validEmail accepts a bare address as Go's net/mail.ParseAddress reads it
// into itself: a dot-atom, `@`, and a dot-atom or an IPv4 literal; a quoted
// local part never reads back as itself, so it is refused as there.
export function validEmail(s) {
  for (const ch of s) if (emailRefuses(ch.codePointAt(0))) return false; // ir.EmailRefuses
  const at = s.lastIndexOf("@");
  if (at <= 0) return false;
  const local = s.slice(0, at), domain = s.slice(at + 1);
  if (!dotAtom(local)) return false;
  if (domain.startsWith("[") && domain.endsWith("]")) return ipv4(domain.slice(1, -1));
  return dotAtom(domain);
}

function daysInMonth(y, m) {
  if (m === 2) return (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28;
  return [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

// daysFromCivil counts days from 1970-01-01 (proleptic Gregorian).
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d];
}

const INSTANT = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;
const pad = (n, w) => String(n).padStart(w, "0");

// instant reads RFC 3339 text and writes it in UTC as Go's time.RFC3339Nano
// does; null when it is no instant (docs/design/reading.md, "Instant").
export function instant(s) {
  const m = INSTANT.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || se > 59) return null;
  let off = 0;
  if (!m[8]) {
    const oh = Number(m[10]), om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    off = (oh * 60 + om) * 60 * (m[9] === "-" ? -1 : 1);
  }
  let secs = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
  const days = Math.floor(secs / 86400);
  secs -= days * 86400;
  const [uy, um, ud] = civilFromDays(days);
  if (uy < 0 || uy > 9999) return null;
  let frac = (m[7] || "").replace(/0+$/, "");
  return `${pad(uy, 4)}-${pad(um, 2)}-${pad(ud, 2)}T${pad(Math.floor(secs / 3600), 2)}:${pad(Math.floor(secs / 60) % 60, 2)}:${pad(secs % 60, 2)}${frac ? "." + frac : ""}Z`;
}

const DURATION_UNITS = { ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n, d: 86400000000000n };

export function validDuration(s) {
  const m = /^(0|[1-9][0-9]{0,18})(ms|s|m|h|d)$/.exec(s);
  return m !== null && BigInt(m[1]) <= INT64_MAX / DURATION_UNITS[m[2]];
}

// quote writes a text as encoding/json does with SetEscapeHTML(false).
export function quote(s) {
  return '"' + s.replace(/["\\\u0000-\u001f\u2028\u2029]/g, (c) => {
    switch (c) {
      case '"': return '\\"';
      case "\\": return "\\\\";
      case "\b": return "\\b";
      case "\f": return "\\f";
      case "\n": return "\\n";
      case "\r": return "\\r";
      case "\t": return "\\t";
    }
    return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  }) + '"';
}

function codePoints(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) i++;
    n++;
  }
  return n;
}

// pattern compiles a rule's pattern to match the whole text. The plan's
// patterns are RE2; one JavaScript reads differently is refused at start-up
// rather than read differently.
function compilePattern(p) {
  new RegExp(p, "u"); // parses on its own, as the Go reader requires
  return new RegExp("^(?:" + p + ")$", "u");
}

function boundOf(text) {
  if (!/^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/.test(text)) throw new Error(`bound ${text} is not a number`);
  return parseDec(text);
}

function recordsOf(plan) {
  const byId = new Map(plan.records.map((r) => [r.id, r]));
  const compiled = new Map();
  const typ = (t) => {
    const ft = { kind: t.kind, optional: !!t.optional, email: t.kind === "email" };
    if (t.kind === "enum") ft.variants = new Set(t.variants || []);
    if (t.kind === "record") ft.rec = record(t.name);
    if (t.kind === "list" || t.kind === "map") {
      if (!t.elem) throw new Error(`${t.kind} without an element type`);
      ft.elem = typ(t.elem);
    }
    const rs = t.rules;
    if (rs) {
      if (rs.min !== undefined) ft.min = boundOf(rs.min);
      if (rs.max !== undefined) ft.max = boundOf(rs.max);
      if (rs.min_length !== undefined) ft.minLen = rs.min_length;
      if (rs.max_length !== undefined) ft.maxLen = rs.max_length;
      if (rs.patterns) ft.patterns = rs.patterns.map(compilePattern);
      if (rs.format === "email") ft.email = true;
      else if (rs.format) throw new Error(`unknown format ${rs.format}`);
    }
    return ft;
  };
  const record = (id) => {
    if (compiled.has(id)) return compiled.get(id);
    const src = byId.get(id);
    if (!src) throw new Error(`unknown record ${id}`);
    const r = { id, fields: [] };
    compiled.set(id, r);
    const fs = [...src.fields].sort((a, b) => compareBytes(a.name, b.name));
    for (const f of fs) r.fields.push({ name: f.name, key: quote(f.name) + ":", t: typ(f.type) });
    return r;
  };
  return record;
}

// Reader reads one queue's messages (runtime/reading.Reader).
export class Reader {
  constructor(plan, queue) {
    if (!queue.id_at || queue.id_at.length === 0) throw new Error(`queue ${queue.name}: empty id_at`);
    if (!queue.events || queue.events.length === 0) throw new Error(`queue ${queue.name}: lists no event`);
    this.idAt = queue.id_at;
    this.typeAt = queue.type_at || null;
    this.idField = queue.id_at.join(".");
    this.typeField = this.typeAt ? this.typeAt.join(".") : "";
    this.events = queue.events;
    const record = recordsOf(plan);
    this.records = queue.events.map((e) => record(e.event));
    this.byWire = new Map(queue.events.map((e, i) => [e.wire_name, i]));
  }

  // read reads a body given as bytes (Uint8Array) and returns
  // {park, reason, problems, id, wireType, event, eventJSON}.
  read(bytes) {
    let text;
    try {
      text = strictUTF8.decode(bytes);
    } catch {
      return this.notJSON();
    }
    return this.readText(text);
  }

  notJSON() {
    const o = this.outcome();
    return this.unreadable(o, [{ field: "", rule: "json" }]);
  }

  outcome() {
    return { park: false, reason: "", problems: null, id: "", wireType: "", event: this.typeAt ? null : this.events[0], eventJSON: null };
  }

  unreadable(o, ps) {
    ps.sort((a, b) => compareBytes(a.field, b.field) || compareBytes(a.rule, b.rule));
    const out = ps.filter((p, i) => i === 0 || p.field !== ps[i - 1].field || p.rule !== ps[i - 1].rule);
    return Object.assign(o, { park: true, reason: "unreadable", problems: out });
  }

  // readText reads a body already decoded from UTF-8.
  readText(text) {
    const o = this.outcome();
    let root;
    try {
      root = parse(text);
    } catch (e) {
      if (e instanceof NotJSON || e instanceof RangeError) return this.notJSON();
      throw e;
    }
    if (root.k !== "obj") return this.notJSON();
    const find = (path) => {
      let n = root;
      for (const name of path) {
        if (n.k !== "obj") return null;
        n = n.byName.get(name);
        if (n === undefined) return null;
      }
      return n;
    };
    const head = [];
    const id = find(this.idAt);
    if (id === null || id.k === "null") head.push({ field: this.idField, rule: "required" });
    else if (id.k === "str") {
      if (id.v === "") head.push({ field: this.idField, rule: "required" });
      else o.id = id.v;
    } else if (id.k === "num") {
      const n = wholeNumber(id.v);
      if (n === null) head.push({ field: this.idField, rule: "type" });
      else o.id = n.toString();
    } else head.push({ field: this.idField, rule: "type" });
    let ev = 0;
    if (this.typeAt) {
      const t = find(this.typeAt);
      if (t === null || t.k === "null") head.push({ field: this.typeField, rule: "required" });
      else if (t.k !== "str") head.push({ field: this.typeField, rule: "type" });
      else if (this.byWire.has(t.v)) {
        ev = this.byWire.get(t.v);
        o.wireType = t.v;
        o.event = this.events[ev];
      } else {
        ev = -1;
        o.wireType = t.v;
      }
    }
    if (head.length > 0) return this.unreadable(o, head);
    if (ev < 0) return Object.assign(o, { park: true, reason: "unlisted_type" });
    const st = { path: "", problems: [] };
    const json = readRecord(st, this.records[ev], root);
    if (st.problems.length > 0) return this.unreadable(o, st.problems);
    if (utf8Length(json) > MAX_EVENT_BYTES) return Object.assign(o, { park: true, reason: "too_large" });
    o.eventJSON = json;
    return o;
  }
}

function problem(st, rule) {
  if (st.problems.length < MAX_PROBLEMS) st.problems.push({ field: st.path, rule });
}

function withSegment(st, seg, f) {
  const mark = st.path;
  st.path = mark === "" ? seg : mark + "." + seg;
  try {
    return f();
  } finally {
    st.path = mark;
  }
}

// keySegment is a map key in a problem's path: its first 256 bytes, cut at
// a character, and "…" when it is longer.
function keySegment(key) {
  if (utf8Length(key) <= MAX_KEY_IN_PATH) return key;
  let n = 0, i = 0;
  while (i < key.length) {
    const cp = key.codePointAt(i);
    const w = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n + w > MAX_KEY_IN_PATH) break;
    n += w;
    i += cp > 0xffff ? 2 : 1;
  }
  return key.slice(0, i) + "…";
}

function readRecord(st, r, obj) {
  let out = "{";
  let wrote = false;
  for (const f of r.fields) {
    const m = obj.byName.get(f.name);
    if (m === undefined || m.k === "null") {
      if (!f.t.optional) withSegment(st, f.name, () => problem(st, "required"));
      continue;
    }
    if (wrote) out += ",";
    wrote = true;
    out += f.key;
    out += withSegment(st, f.name, () => readValue(st, f.t, m));
  }
  return out + "}";
}

function readElem(st, t, n) {
  if (n.k === "null") {
    if (!t.optional) problem(st, "required");
    return "null";
  }
  return readValue(st, t, n);
}

function readText(st, t, s) {
  if (t.minLen !== undefined || t.maxLen !== undefined) {
    const n = codePoints(s);
    if (t.minLen !== undefined && n < t.minLen) problem(st, "min_length");
    if (t.maxLen !== undefined && n > t.maxLen) problem(st, "max_length");
  }
  if (t.patterns) {
    for (const re of t.patterns) {
      if (!re.test(s)) {
        problem(st, "pattern");
        break;
      }
    }
  }
  if (t.email && !validEmail(s)) problem(st, "format");
}

function readValue(st, t, n) {
  const want = (k) => {
    if (n.k !== k) {
      problem(st, "type");
      return false;
    }
    return true;
  };
  switch (t.kind) {
    case "text": case "email": case "url":
      if (!want("str")) return "";
      readText(st, t, n.v);
      return quote(n.v);
    case "uuid":
      if (!want("str")) return "";
      if (!UUID.test(n.v)) { problem(st, "format"); return ""; }
      return '"' + n.v.replace(/[A-Z]/g, (c) => c.toLowerCase()) + '"';
    case "int": {
      if (!want("num")) return "";
      const v = wholeNumber(n.v);
      if (v === null) { problem(st, "type"); return ""; }
      const d = parseDec(v.toString());
      if (t.min && cmpDec(d, t.min) < 0) problem(st, "min");
      if (t.max && cmpDec(d, t.max) > 0) problem(st, "max");
      return v.toString();
    }
    case "decimal": {
      if (!want("num")) return "";
      if (t.min || t.max) {
        const d = parseDec(n.v);
        if (t.min && cmpDec(d, t.min) < 0) problem(st, "min");
        if (t.max && cmpDec(d, t.max) > 0) problem(st, "max");
      }
      return n.v;
    }
    case "bool":
      if (n.k === "true" || n.k === "false") return n.k;
      problem(st, "type");
      return "";
    case "instant": {
      if (!want("str")) return "";
      const s = instant(n.v);
      if (s === null) { problem(st, "format"); return ""; }
      return '"' + s + '"';
    }
    case "duration":
      if (!want("str")) return "";
      if (!validDuration(n.v)) { problem(st, "format"); return ""; }
      return '"' + n.v + '"';
    case "enum":
      if (!want("str")) return "";
      if (!t.variants.has(n.v)) { problem(st, "enum"); return ""; }
      return quote(n.v);
    case "record":
      if (!want("obj")) return "";
      return readRecord(st, t.rec, n);
    case "list": {
      if (!want("arr")) return "";
      const parts = n.items.map((item, i) => withSegment(st, String(i), () => readElem(st, t.elem, item)));
      return "[" + parts.join(",") + "]";
    }
    case "map": {
      if (!want("obj")) return "";
      const ms = [...n.members].sort((a, b) => compareBytes(a[0], b[0]));
      const parts = ms.map(([k, v]) => quote(k) + ":" + withSegment(st, keySegment(k), () => readElem(st, t.elem, v)));
      return "{" + parts.join(",") + "}";
    }
  }
  throw new Error(`unknown kind ${t.kind}`);
}

// ---------------------------------------------------------------- bodies

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// bodyOf turns a message's body, as Workers hand it over, into what is read
// and what is parked: {bytes, text, parsed}. `bytes` and `text` content types
// arrive exact; `json` arrives parsed (its exact bytes gone), so it is
// written back with JSON.stringify and read from that (docs/design/workers.md).
// A value JSON cannot hold (the `v8` content type: a BigInt, a cycle, a Map)
// has no JSON text at all: {notJSON: why}, which the consumer never
// acknowledges unkept (jadpoWorker's queue).
export function bodyOf(body) {
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body), parsed: false };
  if (ArrayBuffer.isView(body)) return { bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), parsed: false };
  if (typeof body === "string") {
    // A lone surrogate has no UTF-8: it is no JSON this reader reads.
    if (!body.isWellFormed()) return { bytes: utf8.encode(body), parsed: false, illFormed: true };
    return { bytes: utf8.encode(body), text: body, parsed: false };
  }
  let why = notJSONText(body);
  let text;
  if (why === "") {
    try {
      text = JSON.stringify(body);
    } catch {
      why = "a value too deep to write";
    }
  }
  if (why !== "" || typeof text !== "string") return { bytes: new Uint8Array(0), parsed: true, notJSON: why || "no JSON text" };
  return { bytes: utf8.encode(text), text, parsed: true, value: body };
}

// notJSONText says why a value handed over parsed cannot be written as JSON
// text exactly, or "" when it can: JSON holds null, booleans, finite
// numbers, texts, arrays without holes and plain objects whose members all
// have a value. JSON.stringify would throw on a BigInt or a cycle and write
// a Map, a Set or a Date as something else; none of those is read.
export function notJSONText(v) {
  const open = new Set();
  const walk = (x, depth) => {
    switch (typeof x) {
      case "string": case "boolean": return "";
      case "number": return Number.isFinite(x) ? "" : `the number ${x}`;
      case "bigint": return "a BigInt";
      case "undefined": return "undefined";
      case "object": break;
      default: return `a ${typeof x}`;
    }
    if (x === null) return "";
    if (open.has(x)) return "a cycle";
    // Deeper than any reading goes: JSON.stringify writes it (or gives up),
    // and the reader finds it too deep.
    if (depth > MAX_DEPTH) return "";
    const proto = Object.getPrototypeOf(x);
    const array = Array.isArray(x);
    if (array ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
      const name = x.constructor && typeof x.constructor.name === "string" && x.constructor.name !== "" ? x.constructor.name : "object";
      return /^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`;
    }
    open.add(x);
    try {
      if (array) {
        for (let i = 0; i < x.length; i++) {
          if (!Object.hasOwn(x, i)) return "an array with holes";
          const w = walk(x[i], depth + 1);
          if (w !== "") return w;
        }
      } else {
        for (const k of Object.keys(x)) {
          const w = walk(x[k], depth + 1);
          if (w !== "") return w;
        }
      }
      return "";
    } finally {
      open.delete(x);
    }
  };
  return walk(v, 0);
}

// readBody reads a message's body. An id that is a whole number beyond 2^53
// in a parsed body has lost digits on the way: it is parked (type), so two
// distinct ids never merge.
export function readBody(reader, b) {
  if (b.illFormed || b.notJSON !== undefined) return reader.notJSON();
  const o = b.text !== undefined ? reader.readText(b.text) : reader.read(b.bytes);
  if (b.parsed) {
    let v = b.value;
    for (const seg of reader.idAt) v = v !== null && typeof v === "object" && !Array.isArray(v) ? v[seg] : undefined;
    if (typeof v === "number" && Number.isInteger(v) && (BigInt(v) > MAX_SAFE || BigInt(v) < -MAX_SAFE)) {
      const out = reader.outcome();
      out.wireType = o.wireType;
      out.event = o.event;
      return reader.unreadable(out, [{ field: reader.idField, rule: "type" }]);
    }
  }
  return o;
}

async function sha256Hex(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (x) => x.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------- the store (D1)

// Times are microseconds since the Unix epoch, as the native store keeps them.
const micros = (ms) => Math.round(ms) * 1000;

export const SQL = {
  received: `INSERT INTO jadpo_received_events (source, received_id, received_at) VALUES (?1, ?2, ?3)
ON CONFLICT (source, received_id) DO NOTHING`,
  // Only when the received id was new: changes() is the statement before's.
  // settled_at (?6) is NULL while the row has deliveries, its created_at
  // when it has none, as the native store writes it.
  outbox: `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, headers, settled_at)
SELECT ?1, ?2, ?3, ?4, ?5, NULL, ?6 WHERE changes() = 1`,
  // The outbox row just written, taken once (MATERIALIZED) before any delivery
  // is written, since each written row moves last_insert_rowid().
  deliveries: `WITH o(id) AS MATERIALIZED (
    SELECT id FROM jadpo_outbox WHERE id = last_insert_rowid() AND source = ?1 AND received_id = ?2 AND changes() = 1)
INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
SELECT o.id, j.value, 'pending', 0, ?3, 0, ?3, ?3 FROM o, json_each(?4) AS j`,
  park: `INSERT INTO jadpo_parked_messages
    (source, wire_type, event_name, reason, problems, body, body_sha256, state, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'failed', ?8, ?8)
ON CONFLICT (source, body_sha256) DO NOTHING`,
  // As the native store's claim: a running row taken over whose handler
  // never started (handler_started still 0) keeps its attempt number, since a
  // claim that never ran is not an attempt (docs/design/store.md).
  claim: `UPDATE jadpo_deliveries
SET state = 'running',
    attempts = attempts + CASE WHEN state = 'running' AND handler_started = 0 THEN 0 ELSE 1 END,
    handler_started = 0, lease_expires_at = ?2, next_attempt_at = ?2,
    fencing_token = fencing_token + 1, updated_at = ?1
WHERE id IN (
    SELECT id FROM jadpo_deliveries
    WHERE state IN ('pending', 'retry_wait', 'running') AND next_attempt_at <= ?1
      AND (state <> 'running' OR lease_expires_at < ?1)
    ORDER BY next_attempt_at, id
    LIMIT ?3)
RETURNING id, fencing_token, attempts, max_attempts, subscriber, outbox_id`,
  claimedEvents: `SELECT id, source, received_id, event_name, event_json FROM jadpo_outbox
WHERE id IN (SELECT value FROM json_each(?1))`,
  // As the native store's settlement (runtime/store/sqlite): the last error's
  // code and text (?7, at most MAX_ERROR_TEXT bytes; NULL on success), then
  // the attempt's row, written from the row just settled and only when the
  // settlement took (changes() is the settle's), in the same D1 batch.
  settle: `UPDATE jadpo_deliveries
SET state = ?3, handler_started = 1, next_attempt_at = COALESCE(?4, next_attempt_at), last_error_code = ?5, last_error = ?7,
    lease_expires_at = NULL,
    settled_at = CASE WHEN ?3 IN ('succeeded', 'failed') THEN ?6 END, updated_at = ?6
WHERE id = ?1 AND fencing_token = ?2 AND state = 'running'`,
  // A handler's start (the native store.SettleStarted): the claim goes on,
  // its attempt counted should its lease end.
  start: `UPDATE jadpo_deliveries SET handler_started = 1, updated_at = ?3
WHERE id = ?1 AND fencing_token = ?2 AND state = 'running'`,
  attempt: `INSERT INTO jadpo_delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
SELECT id, attempts, updated_at, state, last_error_code, last_error FROM jadpo_deliveries
WHERE id = ?1 AND fencing_token = ?2 AND changes() = 1`,
};

// isStatementError tells a batch D1 refused as a statement (a constraint, a
// value it cannot take) from D1 being unable to run it now.
export function isStatementError(e) {
  const m = String(e && (e.message || e));
  return /SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)|constraint failed|datatype mismatch|string or blob too big/i.test(m);
}

// ---------------------------------------------------------------- the Worker

// The delivery engine's numbers, as runtime/deliver.go's (the shared table
// testdata/delivery/table.json holds the two equal).
export const CLAIM_LIMIT = 32;
// LEASE_MS is a claim's lease; HANDLER_TIMEOUT_MS is one handler run's whole
// budget (every step, every fetch try and the pauses between), shorter than
// the lease so that the settlement is written while the lease holds.
export const LEASE_MS = 60000;
export const HANDLER_TIMEOUT_MS = 45000;
// REQUEST_TIMEOUT_MS bounds one fetch try, as the native HTTP client's
// timeout does; TRANSPORT_TRIES is how many a retry_safe operation gets
// without an answer, TRANSPORT_PAUSE_MS the pause after the first (doubling,
// at most TRANSPORT_PAUSE_MAX_MS), as providers/wire's client.
export const REQUEST_TIMEOUT_MS = 30000;
export const TRANSPORT_TRIES = 3;
export const TRANSPORT_PAUSE_MS = 100;
export const TRANSPORT_PAUSE_MAX_MS = 2000;
// MAX_CLAIMS bounds the claims of one invocation.
export const MAX_CLAIMS = 100;

function settingText(plan, v) {
  if (!v) return undefined;
  let raw = v.literal;
  if (v.config) raw = (plan.config.find((c) => c.name === v.config) || {}).default;
  return raw;
}

// notJSONBody is what is parked for a message whose body JSON cannot hold:
// there is no JSON text to keep, so the row's body names the message, and
// two such messages are two rows (the park is once per queue and body).
export function notJSONBody(id, why) {
  return utf8.encode(`Cloudflare message ${id}: its body has no JSON text (${why})`);
}

// readPlan reads the plan as build/plan.json holds it, keeping its literals
// exact: a number in a `literal` or a `default` member (a setting's or an
// argument's value, a config field's default) is a JSONNumber of its text,
// sent and compared as the digits the plan holds, as the native runtime
// reads it (ir.DecodeLiteral); JSON.parse, or the plan written as a
// JavaScript object, would round 123456789012345678901 to
// 123456789012345680000. The plan's other numbers (retries, lengths) are
// small and read as numbers; rules' bounds are text already.
export function readPlan(text) {
  let root;
  try {
    root = parse(text, 100000);
  } catch (e) {
    if (e instanceof NotJSON || e instanceof RangeError) throw new Error("the plan is not JSON as codegen.EncodePlan writes it");
    throw e;
  }
  const value = (n, literal) => {
    switch (n.k) {
      case "obj": {
        const o = {};
        // defineProperty: a member named __proto__ (an argument record's) is a member.
        for (const [k, v] of n.members) Object.defineProperty(o, k, { value: value(v, literal || k === "literal" || k === "default"), enumerable: true, writable: true, configurable: true });
        return o;
      }
      case "arr": return n.items.map((x) => value(x, literal));
      case "str": return n.v;
      case "num": return literal ? new JSONNumber(n.v) : Number(n.v);
      case "true": return true;
      case "false": return false;
      default: return null;
    }
  };
  return value(root, false);
}

// jadpoWorker makes the Worker's handlers for a plan: the plan's JSON text
// (read by readPlan, as worker.mjs holds it), or a plan already read. For tests: `opts.now`
// (ms) is the clock of the store's times (leases, due times), `opts.random`
// ([0,1)) the jitter's draw, `opts.handlerTimeoutMs` and `opts.leaseMs` the
// budget and lease; a Worker uses the clock, Math.random and the constants.
export function jadpoWorker(plan, opts = {}) {
  if (typeof plan === "string") plan = readPlan(plan);
  const now = opts.now || (() => Date.now());
  const random = opts.random || Math.random;
  const leaseMs = opts.leaseMs || LEASE_MS;
  const handlerTimeoutMs = opts.handlerTimeoutMs || HANDLER_TIMEOUT_MS;
  if (handlerTimeoutMs >= leaseMs) throw new Error(`the handler timeout (${handlerTimeoutMs} ms) must be shorter than the lease (${leaseMs} ms)`);
  const queues = new Map(); // Cloudflare queue name -> {queue, reader, subscribers, dead, lastAttempt}
  for (const q of plan.queues) {
    const cn = plan.connections.find((c) => c.name === q.connection);
    const name = settingText(plan, cn.settings.queue_name);
    const entry = { queue: q, reader: new Reader(plan, q), subscribers: subscribersOf(plan, q) };
    const dlq = settingText(plan, cn.settings.dead_letter_queue);
    const retries = Number(settingText(plan, cn.settings.max_retries) ?? 3);
    // Without a dead-letter queue, the delivery after max_retries is the last.
    queues.set(name, { ...entry, dead: false, lastAttempt: dlq === undefined ? retries + 1 : Infinity });
    if (dlq !== undefined) queues.set(dlq, { ...entry, dead: true, lastAttempt: Infinity });
  }

  async function keepBatch(db, items) {
    const at = micros(now());
    const stmts = [];
    for (const it of items) {
      const src = it.q.queue.source;
      if (it.o.park) {
        stmts.push(db.prepare(SQL.park).bind(src, it.o.wireType === "" && !it.o.event ? null : it.o.wireType || null,
          it.o.event ? it.o.event.name : null, it.o.reason, JSON.stringify(it.o.problems || []), it.b.bytes, it.sha, at));
        continue;
      }
      stmts.push(db.prepare(SQL.received).bind(src, it.o.id, at));
      const subs = it.q.subscribers.get(it.o.event.event) || [];
      stmts.push(db.prepare(SQL.outbox).bind(src, it.o.event.name, it.o.eventJSON, it.o.id, at, subs.length === 0 ? at : null));
      if (subs.length > 0) stmts.push(db.prepare(SQL.deliveries).bind(src, it.o.id, at, JSON.stringify(subs)));
    }
    if (stmts.length > 0) await db.batch(stmts);
  }

  const storeRefused = (q, o) => Object.assign(q.reader.outcome(), { wireType: o.wireType, event: o.event, park: true, reason: "unreadable", problems: [{ field: "", rule: "store" }] });

  async function queue(batch, env, ctx) {
    const q = queues.get(batch.queue);
    if (!q) {
      // Not a queue of this plan: handed back, never dropped.
      for (const m of batch.messages) m.retry();
      console.error(JSON.stringify({ msg: "a batch from a queue the plan does not consume", queue: batch.queue }));
      return;
    }
    const db = env.JADPO_DB;
    const items = [];
    for (const m of batch.messages) {
      const b = bodyOf(m.body);
      if (b.notJSON !== undefined) {
        // No JSON text: nothing to read, and nothing a repeat could be told
        // from. Never acknowledged unkept: retried, until the dead-letter
        // queue (or, without one, the last delivery) parks it under its own
        // message id.
        if (!q.dead && m.attempts < q.lastAttempt) {
          console.error(JSON.stringify({ msg: "a body JSON cannot hold is retried; the dead-letter queue parks it", queue: batch.queue, message_id: m.id, why: b.notJSON }));
          m.retry();
          continue;
        }
        b.bytes = notJSONBody(m.id, b.notJSON);
      }
      const o = readBody(q.reader, b);
      items.push({ m, q, b, o, sha: await sha256Hex(b.bytes) });
    }
    // A parked body is parked once per queue and body, even twice in a batch.
    const parkedHere = new Set();
    const kept = items.filter((it) => !it.o.park || !parkedHere.has(it.sha) && parkedHere.add(it.sha));
    try {
      await keepBatch(db, kept);
    } catch (e) {
      if (!isStatementError(e)) {
        // D1 cannot take the batch now: every message is offered again (on a
        // dead-letter queue after its consumer's retry_delay, for hours).
        console.error(JSON.stringify({ msg: "the store could not keep the batch; its messages are retried", queue: batch.queue, error: String(e.message || e) }));
        for (const it of items) it.m.retry();
        return;
      }
      // All or nothing: find the message at fault by keeping one by one.
      for (const it of kept) {
        try {
          await keepBatch(db, [it]);
        } catch (e1) {
          if (!isStatementError(e1)) { it.m.retry(); it.retried = true; continue; }
          it.o = storeRefused(q, it.o);
          try {
            await keepBatch(db, [it]);
          } catch {
            it.m.retry();
            it.retried = true;
          }
        }
      }
    }
    for (const it of items) if (!it.retried) it.m.ack();
    if (ctx && ctx.waitUntil) ctx.waitUntil(deliver(env).catch((e) => console.error(JSON.stringify({ msg: "deliveries failed", error: String(e.message || e) }))));
    else await deliver(env);
  }

  // deliver runs due deliveries until a claim comes back short, and returns
  // {claimed, succeeded, retried, failed, lost} once every delivery it
  // claimed has settled. Each delivery is settled as soon as its handler
  // finishes, never waiting for the others of its claim (settler); up to
  // CLAIM_LIMIT run at once, and a claim for more is made once half of
  // them have settled.
  async function deliver(env) {
    const rep = { claimed: 0, succeeded: 0, retried: 0, failed: 0, lost: 0 };
    if (plan.subscribers.length === 0) return rep;
    const db = env.JADPO_DB;
    const settle = settler(db);
    const running = new Set();
    const errors = [];
    let more = true;
    for (let claims = 0; ;) {
      if (more && claims < MAX_CLAIMS && running.size <= CLAIM_LIMIT / 2) {
        claims++;
        const want = CLAIM_LIMIT - running.size;
        try {
          const t = now(), claimedAt = Date.now();
          const claimed = (await db.prepare(SQL.claim).bind(micros(t), micros(t + leaseMs), want).all()).results;
          more = claimed.length === want;
          if (claimed.length > 0) {
            rep.claimed += claimed.length;
            const ids = [...new Set(claimed.map((c) => c.outbox_id))];
            const events = new Map((await db.prepare(SQL.claimedEvents).bind(JSON.stringify(ids)).all()).results.map((r) => [r.id, r]));
            for (const c of claimed) {
              const p = attempt(env, c, events.get(c.outbox_id), claimedAt, settle)
                .then((a) => (a.lost ? "lost" : settle.settlement(a)))
                .then((outcome) => { rep[outcome]++; }, (e) => { errors.push(e); })
                .finally(() => running.delete(p));
              running.add(p);
            }
          }
        } catch (e) {
          // The store cannot claim now; what runs still settles.
          more = false;
          errors.push(e);
        }
        continue;
      }
      if (running.size === 0) break;
      await Promise.race(running);
    }
    if (errors.length > 0) throw new AggregateError(errors, `deliveries: ${errors.map((e) => String(e && e.message || e)).join("; ")}`);
    return rep;
  }

  // settler writes settlements as their handlers finish, each under its own
  // fencing token: one at once, and the ones that finished while it was
  // written go together in the next D1 batch (one transaction), so quick
  // deliveries share a write and none waits for a slow one. It resolves each
  // with its outcome ("lost" for a claim taken over, which settles nothing).
  // A batch D1 refuses as a whole is written one settlement at a time, so
  // that one bad statement does not hold back the others.
  //
  // It writes handlers' starts too (start(c), the native SettleStarted), with
  // the next write: those pushed in one turn of the event loop (a claim's)
  // go in one batch. A start is "started", or "lost" when another claim took
  // the delivery over; one whose settlement is in the same batch is written
  // by it, since a settlement sets handler_started as well.
  function settler(db) {
    let waiting = [];
    let writing = false;
    const write = async () => {
      try {
        while (waiting.length > 0) {
          const group = waiting;
          waiting = [];
          try {
            await writeGroup(group);
          } catch (e) {
            for (const { fail } of group) fail(e);
          }
        }
      } finally {
        writing = false;
      }
    };
    const key = (c) => `${c.id}:${c.fencing_token}`;
    // writeGroup writes a group in one batch, then, if D1 refuses it,
    // write by write; calling ok or fail for each (a promise resolved twice
    // keeps its first).
    const writeGroup = async (group) => {
      const at = micros(now());
      const settling = new Map(group.filter((g) => g.a).map((g) => [key(g.a.c), g]));
      const folded = group.filter((g) => g.start && settling.has(key(g.start)));
      const writes = group.filter((g) => !(g.start && settling.has(key(g.start))));
      // A start is one statement; a settlement two: the settle and its attempt's row.
      const parts = writes.map((g) => g.start
        ? [db.prepare(SQL.start).bind(g.start.id, g.start.fencing_token, at)]
        : [db.prepare(SQL.settle).bind(g.a.c.id, g.a.c.fencing_token, g.a.state, g.a.next, g.a.code, at, g.a.error),
          db.prepare(SQL.attempt).bind(g.a.c.id, g.a.c.fencing_token)]);
      let results;
      try {
        const rs = await db.batch(parts.flat());
        let i = 0;
        results = parts.map((part) => {
          const r = rs[i];
          i += part.length;
          return { r };
        });
      } catch (e) {
        if (parts.length > 1) console.log(JSON.stringify({ msg: "settling deliveries together failed; settling them one by one", deliveries: parts.length, error: String(e && e.message || e) }));
        results = [];
        for (const part of parts) {
          try {
            results.push({ r: (await db.batch(part))[0] });
          } catch (e1) {
            results.push({ e: e1 });
          }
        }
      }
      const byKey = new Map();
      writes.forEach((g, i) => {
        const { r, e } = results[i] || {};
        const bad = e !== undefined || !r || !r.meta;
        if (g.a) byKey.set(key(g.a.c), { r, e, bad });
        if (bad) g.fail(e !== undefined ? e : new Error("D1 answered a settlement with no result"));
        else if (r.meta.changes === 0) g.ok("lost");
        else g.ok(g.start ? "started" : { succeeded: "succeeded", retry_wait: "retried", failed: "failed" }[g.a.state]);
      });
      for (const g of folded) {
        const { r, e, bad } = byKey.get(key(g.start));
        if (bad) g.fail(e !== undefined ? e : new Error("D1 answered a settlement with no result"));
        else g.ok(r.meta.changes === 0 ? "lost" : "started");
      }
    };
    const push = (entry) => new Promise((ok, fail) => {
      waiting.push({ ...entry, ok, fail });
      if (!writing) {
        writing = true;
        queueMicrotask(write);
      }
    });
    return { settlement: (a) => push({ a }), start: (c) => push({ start: c }) };
  }

  // attempt runs one claimed delivery's handler and says how to settle it
  // ({lost: true} when its start found the delivery taken over: nothing ran).
  // A handler's start is written as the native engine writes it (runtime/deliver.go,
  // docs/design/store.md "A claim that never ran is not an attempt"): only
  // for a delivery whose handler runs; on its last attempt before the
  // handler calls anything, so that an attempt that may have reached the
  // target is always counted; on an earlier one with the next write, the
  // handler starting at once. A start that cannot be written leaves the
  // claim to its lease, unrun and so uncounted.
  async function attempt(env, c, ev, claimedAt, settle) {
    const sub = plan.subscribers.find((s) => s.name === c.subscriber);
    const budget = attemptBudget(c.max_attempts, sub ? sub.retry.max_attempts : 1);
    const h = sub && ev ? sub.handlers.find((x) => x.name === ev.event_name) : undefined;
    let err = null;
    if (runsHandler(c.attempts, budget, !!h)) {
      const started = settle.start(c);
      if (startsGated(c.attempts, budget)) {
        if ((await started) === "lost") return { c, lost: true };
      } else {
        started.catch(() => {}); // the settlement writes the start too
      }
      try {
        await runHandler(env, h, ev.event_json, claimedAt);
      } catch (e) {
        err = e;
      }
    }
    const s = settlementOf(c.attempts, budget, !!h, err);
    // The last error's text, as the native engine keeps it: none for a
    // lease_expired or a success.
    let why = null;
    if (s.code === "handler_missing") why = deliveryErrors.handlerMissing(c.subscriber, ev ? ev.event_name : "").message;
    else if (err) why = String(err && err.message || err);
    const out = { c, state: s.state, code: s.code, error: errorText(why), next: null };
    if (s.state === "retry_wait") out.next = micros(now() + backoffDraw(sub.retry, c.attempts, random));
    if (err) console.log(JSON.stringify({ msg: "delivery attempt failed", delivery: c.id, subscriber: c.subscriber, attempt: c.attempts, error_code: s.code }));
    return out;
  }

  // runHandler runs a handler's steps within one budget: the signal aborts
  // whatever fetch or pause is under way once handlerTimeoutMs has passed
  // since the run began, and never later than half the lease's margin over
  // the budget after the claim (claimedAt), should the claim's answer or the
  // start's write have been slow: the settlement is written while the lease
  // holds. The event is read with its numbers as their text (keptEvent), so
  // an Int goes out as the digits that came in.
  async function runHandler(env, h, eventJSON, claimedAt = Date.now()) {
    const event = keptEvent(eventJSON);
    const began = Date.now();
    const deadline = Math.min(began + handlerTimeoutMs, claimedAt + handlerTimeoutMs + (leaseMs - handlerTimeoutMs) / 2);
    const run = { deadline, ac: new AbortController() };
    // A budget already spent (its start waited that long) sends nothing.
    if (deadline <= began) run.ac.abort();
    const timer = setTimeout(() => run.ac.abort(), Math.max(0, deadline - began));
    try {
      for (const st of h.steps) {
        const conn = plan.connections.find((c) => c.name === st.connection);
        const op = conn.operations.find((o) => o.ref === st.operation);
        await callJSONHTTP(env, conn, op, stepArgs(plan, env, st, event, eventJSON), run);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  const configValue = (env, name) => configValueOf(plan, env, name);

  function connValue(env, v) {
    if (!v) return undefined;
    if (v.config) return configValue(env, v.config);
    return v.literal;
  }

  // callJSONHTTP calls one operation within the run's budget: each fetch try
  // gets at most REQUEST_TIMEOUT_MS and what is left of the budget; a
  // retry_safe operation without an answer is tried again after a pause, as
  // long as the budget lasts.
  async function callJSONHTTP(env, conn, op, args, run) {
    const host = connValue(env, conn.host) || conn.provider.host;
    let path = op.path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(connValue(env, conn.settings[name]))));
    const headers = { "content-type": "application/json" };
    if (conn.provider.credential === "bearer") headers.authorization = "Bearer " + connValue(env, conn.credential.token);
    const init = { method: op.method || "POST", headers };
    if (op.input) init.body = inputBody(plan, op, args);
    const url = String(host).replace(/\/$/, "") + path;
    const tries = op.retry_safe ? TRANSPORT_TRIES : 1;
    // The texts are the native wire.TransportError's and wire.Refusal's
    // (deliveryErrors), which a delivery keeps as its last_error: never the
    // answer's text.
    const noAnswer = (timedOut, tries) => deliveryErrors.noAnswer(op.ref, tries, timedOut);
    for (let n = 1; ; n++) {
      // Spent before try n: the tries made, or, before the first, one, as
      // the native client counts a request its spent context refused.
      if (run.ac.signal.aborted) throw noAnswer(true, Math.max(n - 1, 1));
      let resp, answer;
      const ac = new AbortController();
      const stop = () => ac.abort();
      run.ac.signal.addEventListener("abort", stop);
      const timer = setTimeout(stop, Math.max(0, Math.min(REQUEST_TIMEOUT_MS, run.deadline - Date.now())));
      try {
        resp = await fetch(url, { ...init, signal: ac.signal });
        answer = await resp.text();
      } catch (e) {
        if (n >= tries || run.ac.signal.aborted) throw noAnswer(ac.signal.aborted, n);
        await pause(transportPause(n), run.ac.signal);
        continue;
      } finally {
        clearTimeout(timer);
        run.ac.signal.removeEventListener("abort", stop);
      }
      if (resp.status >= 200 && resp.status <= 299) return;
      throw deliveryErrors.refused(op.ref, refusalCode(conn.provider.error_code, answer) || "http_" + resp.status, resp.status, credentialFields(conn));
    }
  }

  async function scheduled(controller, env, ctx) {
    const rep = await deliver(env);
    if (rep.claimed > 0) console.log(JSON.stringify({ msg: "deliveries", ...rep }));
  }

  return withConfigCheck(plan, { queue, scheduled, deliver }, { validEmail, instant, validDuration, compilePattern });
}

// configValueOf is a config field's value as the native Config holds it.
function configValueOf(plan, env, name) {
  const f = plan.config.find((c) => c.name === name);
  if (!f) return undefined;
  if (env[f.binding] === undefined || env[f.binding] === "") return f.default;
  // wrangler.toml's [vars], --var and secrets give text; checkConfig held it to the type.
  const v = String(env[f.binding]);
  if (f.type.kind === "int") return /^[+-]?[0-9]+$/.test(v.trim()) ? new JSONNumber(BigInt(v.trim()).toString()) : Number(v);
  // A Decimal goes out as its digits, a number (the native json.Number).
  if (f.type.kind === "decimal") return new JSONNumber(v);
  if (f.type.kind === "bool") return v === "true";
  return v;
}

// stepArgs are a step's arguments, computed from the event (keptEvent's
// values; eventJSON its text), the plan's literals and config, as the
// native deliverer's eval computes them.
export function stepArgs(plan, env, st, event, eventJSON) {
  const args = {};
  for (const [name, x] of Object.entries(st.args)) {
    Object.defineProperty(args, name, { value: argValue(plan, env, x, event, eventJSON), enumerable: true, writable: true, configurable: true });
  }
  return args;
}

function argValue(plan, env, x, event, eventJSON) {
  if (x.literal !== undefined) return x.literal;
  if (x.event) return event;
  if (x.path) {
    let cur = event;
    for (const p of x.path) cur = cur !== null && typeof cur === "object" && !(cur instanceof JSONNumber) && Object.hasOwn(cur, p) ? cur[p] : undefined;
    return cur;
  }
  if (x.config) return configValueOf(plan, env, x.config);
  if (x.record) {
    const out = {};
    for (const [k, v] of Object.entries(x.record)) {
      Object.defineProperty(out, k, { value: argValue(plan, env, v, event, eventJSON), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (x.list) return x.list.map((v) => argValue(plan, env, v, event, eventJSON));
  if (x.json) return eventJSON;
  return undefined;
}

// inputBody is the JSON an operation is sent for its input args, or the
// input_invalid error (deliveryErrors.inputUnfit) of the first thing that
// does not fit, as the native wire.Encode: the handler's fault, not the
// service's, so nothing is sent and it is not retried.
export function inputBody(plan, op, args) {
  try {
    return encodeJSON(wireValue(plan, op.input, args, ""));
  } catch (e) {
    if (!(e instanceof InputUnfit)) throw e;
    throw deliveryErrors.inputUnfit(op.ref, e.path, e.rule);
  }
}

// WireObject is a JSON object's members in the order they are written
// (encodeJSON): a record's in declaration order, a map's by key. A plain
// object would put "10" before "9" and both before "a".
class WireObject {
  constructor(members) { this.members = members; }
}

const jsonNumberRe = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof JSONNumber) && !(v instanceof WireObject);

// wireValue is v as the native wire.Encode writes it for the plan's type t
// (providers/wire/codec.go; the type as runtime's shapeOf makes it a shape:
// Uuid, Instant, Email, Url, Duration and enums travel as text, an enum's
// value not checked against its variants, as natively). At the dotted
// path of field names (list elements by index, map values by key), its
// first problem is an InputUnfit: a value missing that its type requires
// ("required"; an optional one is left out of a record, null in a list or
// map); a member its record does not declare ("unknown"; told before the
// record's fields, which are told in declaration order); a value of another
// kind ("type"): an Int must be a whole number within int64, written as its
// digits however large (a JSONNumber's text, never rounded through a
// double); a Decimal a number, never text; a Bool true or false; a Text text;
// a List a list; a Map or a record an object.
function wireValue(plan, t, v, path) {
  const at = (name) => (path === "" ? String(name) : `${path}.${name}`);
  if (v === undefined || v === null) {
    if (t.optional) return null;
    throw new InputUnfit(path, "required");
  }
  const unfit = () => new InputUnfit(path, "type");
  switch (t.kind) {
    case "int": {
      let n = null;
      if (v instanceof JSONNumber) {
        if (/^[+-]?[0-9]+$/.test(v.toString())) n = BigInt(v.toString());
      } else if (typeof v === "bigint") {
        n = v;
      } else if (typeof v === "number" && Number.isInteger(v)) {
        n = BigInt(v);
      }
      if (n === null || n < INT64_MIN || n > INT64_MAX) throw unfit();
      return new JSONNumber(n.toString());
    }
    case "decimal":
      if (v instanceof JSONNumber) {
        if (!jsonNumberRe.test(v.toString())) throw unfit();
        return v;
      }
      if (typeof v === "bigint" || (typeof v === "number" && Number.isFinite(v))) return v;
      throw unfit();
    case "bool":
      if (typeof v !== "boolean") throw unfit();
      return v;
    case "list":
      if (!Array.isArray(v)) throw unfit();
      return v.map((x, i) => wireValue(plan, t.elem, x, at(i)));
    case "map":
      if (!isObject(v)) throw unfit();
      return new WireObject(Object.keys(v).sort(compareBytes).map((k) => [k, wireValue(plan, t.elem, v[k], at(k))]));
    case "record": {
      const rec = plan.records.find((r) => r.id === t.name);
      // The native runtime does not start on such a plan (shapeOf).
      if (!rec) throw new Error(`the plan has no record ${t.name}`);
      if (!isObject(v)) throw unfit();
      for (const k of Object.keys(v).sort(compareBytes)) {
        if (!rec.fields.some((f) => f.name === k)) throw new InputUnfit(at(k), "unknown");
      }
      const members = [];
      for (const f of rec.fields) {
        const x = Object.hasOwn(v, f.name) ? v[f.name] : undefined;
        if ((x === undefined || x === null) && f.type.optional) continue;
        members.push([f.wire_name || f.name, wireValue(plan, f.type, x, at(f.name))]);
      }
      return new WireObject(members);
    }
    default:
      if (typeof v !== "string") throw unfit();
      return v;
  }
}

// deliveryErrors are the errors a handler's run ends with, each worded as
// the native runtime words the same failure (providers/wire's Refusal,
// TransportError and DecodeError; runtime/deliver.go's handler_missing and
// kept event), its text the delivery's last_error, and each with the code
// and kind the native classify gives it (settlementOf reads them): the
// "errors" cases of testdata/delivery/table.json hold both engines to them.
// A transport failure's cause, after its attempts, is each platform's own
// account: Go's net/http error natively, the Worker's two words here.
export const deliveryErrors = {
  // A refusal of the credential adds what to check, the credential's config
  // fields by name (wire.CredentialHint's text; a Worker signs no SigV4).
  refused: (op, code, status, credentialFields = []) => {
    const temporary = isTemporary(status, code);
    let text = `${op} refused: ${code} (HTTP ${status}, ${temporary ? "temporary" : "permanent"})`;
    if (isCredentialRefusal(status, code)) {
      text += credentialFields.length === 0 ? "; check the connection's credential"
        : `; check the credential's config field${credentialFields.length > 1 ? "s" : ""} ${credentialFields.join(", ")}`;
    }
    return Object.assign(new Error(text), { code, temporary });
  },
  noAnswer: (op, attempts, timedOut) => Object.assign(
    new Error(`${op}: no answer after ${attempts} attempt(s): ${timedOut ? "the time budget ran out" : "the connection failed"}`),
    { code: timedOut ? "timeout" : "transport", temporary: true }),
  inputUnfit: (op, path, rule) => Object.assign(
    new Error(`${op}: input does not fit its shape at ${path === "" ? "(root)" : path}: ${rule}`), { code: "input_invalid", temporary: false }),
  // Its code is the settlement's (handler_missing), not the error's.
  handlerMissing: (subscriber, event) => new Error(`the plan running now has no handler of ${subscriber} for ${event}`),
  // Code "handler", as anything else a handler could not do.
  eventNotJSON: (cause) => new Error(`the kept event is not JSON: ${cause}`),
};

// keptEvent reads a kept event's JSON for its handler (eventValue); one that
// is not JSON is the handler's failure, worded as the native runtime's.
export function keptEvent(text) {
  try {
    return eventValue(text);
  } catch (e) {
    if (!(e instanceof NotJSON || e instanceof RangeError)) throw e;
    throw deliveryErrors.eventNotJSON(e instanceof RangeError ? "nested too deep" : "it is not strict JSON text");
  }
}

// MAX_ERROR_TEXT is the most of an error's text a delivery keeps, in UTF-8
// bytes (store.MaxErrorText).
export const MAX_ERROR_TEXT = 1024;

// errorText is the text a delivery keeps of an error, as the native store's
// sqlcommon.ErrorText: null for none; a lone surrogate made U+FFFD, cut to
// MAX_ERROR_TEXT bytes at a character, NULs left out.
export function errorText(s) {
  if (s === null || s === undefined || s === "") return null;
  s = String(s).toWellFormed();
  if (utf8Length(s) > MAX_ERROR_TEXT) {
    let n = 0, i = 0;
    while (i < s.length) {
      const cp = s.codePointAt(i);
      const w = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (n + w > MAX_ERROR_TEXT) break;
      n += w;
      i += cp > 0xffff ? 2 : 1;
    }
    s = s.slice(0, i);
  }
  s = s.replaceAll("\0", "");
  return s === "" ? null : s;
}

// pause waits ms, or until signal aborts.
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

// transportPause is the pause after try n of a call that got no answer, as
// providers/wire's defaultBackoff: 100 ms doubling, at most 2 s.
export function transportPause(n) {
  return n > 5 ? TRANSPORT_PAUSE_MAX_MS : Math.min(TRANSPORT_PAUSE_MS * 2 ** (n - 1), TRANSPORT_PAUSE_MAX_MS);
}

// attemptBudget is ir.Retry.Budget: a delivery's own max_attempts when the
// store holds one, else its subscriber's.
export function attemptBudget(stored, subscriberMax) {
  return stored > 0 ? stored : subscriberMax;
}

// runsHandler says whether an attempt runs its handler: only within the
// budget, and when the plan has one.
export function runsHandler(attempt, budget, handler) {
  return attempt <= budget && handler;
}

// startsGated says whether a handler waits for its start to be written
// before it calls anything: on the delivery's last attempt, as the native
// engine's (an earlier attempt starts at once, its start written with the
// next write).
export function startsGated(attempt, budget) {
  return attempt >= budget;
}

// settlementOf decides a claimed delivery's settlement as the native
// engine's attempt does, in its order: attempts beyond the budget were
// claims whose handlers started and never settled (lease_expired, nothing
// run); no handler is
// handler_missing; a handler that succeeded succeeds; a temporary failure
// waits for another attempt while the budget allows one; anything else
// fails. err is what the handler threw, or null.
export function settlementOf(attempt, budget, handler, err) {
  if (attempt > budget) return { state: "failed", code: "lease_expired" };
  if (!handler) return { state: "failed", code: "handler_missing" };
  if (!err) return { state: "succeeded", code: null };
  const code = err.code || "handler";
  return { state: err.temporary && attempt < budget ? "retry_wait" : "failed", code };
}

// JSONNumber is a number of a kept event as its text: an Int beyond 2^53
// (to 2^63-1) goes out as the digits that came in, as the native runtime
// sends a json.Number.
export class JSONNumber {
  #text;
  constructor(text) { this.#text = text; }
  toString() { return this.#text; }
}

// eventValue reads a kept event's JSON (the reader's canonical text) into
// values: objects without a prototype, numbers as JSONNumber.
export function eventValue(text) {
  const value = (n) => {
    switch (n.k) {
      case "obj": {
        const o = Object.create(null);
        for (const [k, v] of n.members) o[k] = value(v);
        return o;
      }
      case "arr": return n.items.map(value);
      case "str": return n.v;
      case "num": return new JSONNumber(n.v);
      case "true": return true;
      case "false": return false;
      default: return null;
    }
  };
  return value(parse(text));
}

// encodeJSON writes a handler's input: a JSONNumber as its text, a
// WireObject's members in their order, members without a value left out;
// text as the native internal/jsonstring writes it (U+2028 and U+2029
// escaped, a lone surrogate as U+FFFD; JSON.stringify does neither).
export function encodeJSON(v) {
  if (v === null || v === undefined) return "null";
  if (v instanceof JSONNumber) return v.toString();
  if (v instanceof WireObject) return "{" + v.members.map(([k, x]) => jsonText(k) + ":" + encodeJSON(x)).join(",") + "}";
  switch (typeof v) {
    case "string": return jsonText(v);
    case "number": if (!Number.isFinite(v)) throw new Error(`the number ${v} has no JSON`); return JSON.stringify(v);
    case "bigint": return v.toString();
    case "boolean": return v ? "true" : "false";
  }
  if (Array.isArray(v)) return "[" + v.map((x) => x === undefined ? "null" : encodeJSON(x)).join(",") + "]";
  const parts = [];
  for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(jsonText(k) + ":" + encodeJSON(x));
  return "{" + parts.join(",") + "}";
}

function jsonText(s) {
  return JSON.stringify(s.toWellFormed()).replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}

// subscribersOf maps each listed event to its subscribers, in the plan's
// order (ir.Program.SubscribersOf).
function subscribersOf(plan, q) {
  return new Map(q.events.map((e) => [e.event,
    plan.subscribers.filter((s) => s.handlers.some((h) => h.event === e.event)).map((s) => s.name)]));
}

// lookup follows a dotted error_code path into an answer, as the native
// awsjson.Lookup does: a member named by the whole rest first, then member
// by member, a list element by its index.
function lookup(v, path) {
  if (path === "") return undefined;
  if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.hasOwn(v, path)) return v[path];
  const dot = path.indexOf(".");
  const head = dot < 0 ? path : path.slice(0, dot);
  let next;
  if (Array.isArray(v)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head)) return undefined;
    next = v[Number(head)];
  } else if (v !== null && typeof v === "object") {
    if (!Object.hasOwn(v, head)) return undefined;
    next = v[head];
  } else return undefined;
  return dot < 0 ? next : lookup(next, path.slice(dot + 1));
}

// toLowerSnake is wire.ToLowerSnake: `RequestThrottled` and
// `request-throttled` both read `request_throttled`.
export function toLowerSnake(s) {
  let out = "";
  let pending = false;
  const lower = (c) => c >= "a" && c <= "z", upper = (c) => c >= "A" && c <= "Z", digit = (c) => c >= "0" && c <= "9";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (upper(c)) {
      if (out.length > 0 && i > 0) {
        const prev = s[i - 1];
        if (lower(prev) || digit(prev) || (upper(prev) && i + 1 < s.length && lower(s[i + 1]))) pending = true;
      }
      if (pending && out.length > 0) out += "_";
      pending = false;
      out += c.toLowerCase();
    } else if (lower(c) || digit(c)) {
      if (pending && out.length > 0) out += "_";
      pending = false;
      out += c;
    } else pending = true;
  }
  return out;
}

// refusalCode reads the code at the provider's error_code (jsonhttp.CodeOf):
// text in lower_snake_case, a whole number n as code_<n>.
function refusalCode(path, answer) {
  if (!path || !answer) return "";
  let v;
  try {
    v = JSON.parse(answer);
  } catch {
    return "";
  }
  const c = lookup(v, path);
  if (typeof c === "string") return toLowerSnake(c);
  if (typeof c === "number" && Number.isSafeInteger(c) && c >= 0) return "code_" + c;
  return "";
}

// isTemporary is wire.IsTemporary: 5xx, 429, or a code that says so.
export function isTemporary(status, code) {
  if ((status >= 500 && status <= 599) || status === 429) return true;
  return ["throttl", "unavailable", "internal_error", "request_timeout"].some((p) => code.includes(p));
}

// isCredentialRefusal is wire.IsCredentialRefusal: 401, 403, or one of AWS's
// codes for a refused signature or key.
export function isCredentialRefusal(status, code) {
  if (status === 401 || status === 403) return true;
  return credentialCodes.has(code.replace(/_exception$/, ""));
}

const credentialCodes = new Set(["invalid_signature", "incomplete_signature", "signature_does_not_match",
  "missing_authentication_token", "unrecognized_client", "invalid_client_token_id", "invalid_access_key_id",
  "expired_token", "request_expired", "access_denied"]);

// credentialFields are the config fields a connection's credential is read
// from, sorted and once each (runtime's credentialFields).
export function credentialFields(conn) {
  return [...new Set(Object.values(conn.credential ?? {}).map((v) => v?.config).filter(Boolean))].sort();
}

// backoffDraw is the native engine's: full jitter under a ceiling doubling
// from first_delay_ms up to max_delay_ms (milliseconds here).
export function backoffDraw(retry, n, random) {
  let ceil = retry.first_delay_ms;
  for (let i = 1; i < n && ceil < retry.max_delay_ms; i++) ceil *= 2;
  ceil = Math.max(Math.min(ceil, retry.max_delay_ms), 0);
  return Math.floor(random() * (ceil + 1));
}

// jadpo:exports-for-tests
export { parse as parseJSONForTests };
