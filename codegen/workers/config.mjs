// The Worker's config check: each config value from the Worker's environment
// held, at the Worker's start, to every rule of its type, as check/ir's
// ValueProblem holds the native runtime's at `run`, `tick` and `dev` and the
// checker's defaults. The shared table testdata/config/table.json holds the
// two equal, problem sentence for problem sentence (check/ir's
// TestValueProblemTable and test/config.test.mjs).
//
// `jadpo build --target workers` writes this file into worker.mjs ahead of
// jadpo.mjs (whose import of it is dropped there), so every top-level name
// here is one jadpo.mjs does not use. What it needs of the reader (the email,
// instant and duration grammars) jadpo.mjs hands in as `lib`, so each rule is
// written once in the Worker.

const CFG_INT64_MIN = -(2n ** 63n);
const CFG_INT64_MAX = 2n ** 63n - 1n;
const CFG_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const CFG_BOOLS = new Set(["true", "false"]);
const CFG_EMAIL = "is not an email address (a bare address such as ann@example.com, without control or bidirectional characters)";
const CFG_DURATION_GRAMMAR = "a whole number of ms, s, m, h or d such as `30s` or `1d`, at most 106751d";

// emailRefuses is ir.EmailRefuses: a character that may not stand in an
// email address (what lang/termtext escapes: C0, DEL, C1, bidirectional
// controls, line and paragraph separators).
export function emailRefuses(cp) {
  return cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
    cp === 0x061c || cp === 0x200e || cp === 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069) || cp === 0x2028 || cp === 0x2029;
}

// cfgRat reads decimal text (an optional sign, digits, an optional fraction)
// as an exact fraction n / d.
function cfgRat(s) {
  const m = /^([+-]?)([0-9]+)(?:\.([0-9]+))?$/.exec(s);
  if (!m) return null;
  const frac = m[3] || "";
  let n = BigInt(m[2] + frac);
  if (m[1] === "-") n = -n;
  return { n, d: 10n ** BigInt(frac.length) };
}
function cfgCmp(a, b) {
  const x = a.n * b.d, y = b.n * a.d;
  return x < y ? -1 : x > y ? 1 : 0;
}

function cfgBounds(rules, text) {
  if (!rules || (rules.min === undefined && rules.max === undefined)) return "";
  const v = cfgRat(text);
  if (!v) return "is not a number";
  if (rules.min !== undefined) {
    const m = cfgRat(rules.min);
    if (m && cfgCmp(v, m) < 0) return `is below the minimum ${rules.min}`;
  }
  if (rules.max !== undefined) {
    const m = cfgRat(rules.max);
    if (m && cfgCmp(v, m) > 0) return `is above the maximum ${rules.max}`;
  }
  return "";
}

// cfgHostByteBad is net/url's shouldEscape(c, encodeHost) for ASCII.
function cfgHostByteBad(c) {
  if (/[A-Za-z0-9]/.test(c)) return false;
  return !"!$&'()*+,;=:[]<>\"-_.~".includes(c);
}

// cfgUnescapeOK is whether net/url's unescape(s, mode) succeeds: every `%`
// starts two hexadecimal digits, and in a host no byte needs escaping and
// no escape stands for a byte below 0x80 but `%25`; in a zone (after `%25`
// in an IP literal) no escape stands for a byte a host may not hold.
function cfgUnescapeOK(s, host, zone = false) {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "%") {
      if (i + 2 >= s.length) return false;
      if (!/^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) return false;
      if (host && !zone && parseInt(s[i + 1], 16) < 8 && s.slice(i, i + 3) !== "%25") return false;
      if (zone) {
        const v = parseInt(s.slice(i + 1, i + 3), 16);
        if (s.slice(i, i + 3) !== "%25" && v !== 0x20 && (v >= 0x80 || cfgHostByteBad(String.fromCharCode(v)))) return false;
      }
      i += 2;
    } else if (host && c.charCodeAt(0) < 0x80 && cfgHostByteBad(c)) {
      return false;
    }
  }
  return true;
}

function cfgPortOK(p) {
  return p === "" || (p[0] === ":" && /^[0-9]*$/.test(p.slice(1)));
}

// cfgAbsoluteURL is `u, err := url.Parse(s); err == nil && u.Scheme != "" &&
// u.Host != ""`, as Go 1.26's net/url reads it (go.mod's version: strict
// colons in an http or https host, an IP literal only for IPv6). Run against
// net/url on 200000 generated URLs it gave no different answer; 60 of them
// stand in testdata/config/table.json.
function cfgAbsoluteURL(s) {
  const hash = s.indexOf("#");
  let u = s, frag = "";
  if (hash >= 0) { u = s.slice(0, hash); frag = s.slice(hash + 1); }
  if (!cfgUnescapeOK(frag, false)) return false;
  for (let i = 0; i < u.length; i++) {
    const c = u.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u);
  if (!sm) return false;
  let rest = u.slice(sm[0].length);
  if (rest.endsWith("?") && rest.split("?").length === 2) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf("?");
    if (q >= 0) rest = rest.slice(0, q);
  }
  if (!rest.startsWith("//")) return false; // opaque, or a path alone: no host
  let authority = rest.slice(2), path = "";
  const slash = authority.indexOf("/");
  if (slash >= 0) { path = authority.slice(slash); authority = authority.slice(0, slash); }
  const at = authority.lastIndexOf("@");
  let host = authority;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return false;
    if (!cfgUnescapeOK(userinfo, false)) return false;
    host = authority.slice(at + 1);
  }
  const open = host.lastIndexOf("[");
  if (open > 0) return false;
  if (open === 0) {
    // An IP literal: an IPv6 address (RFC 3986), its zone after %25.
    const close = host.lastIndexOf("]");
    if (close < 0 || !cfgPortOK(host.slice(close + 1))) return false;
    const name = host.slice(1, close), zone = name.indexOf("%25");
    const addr = zone >= 0 ? name.slice(0, zone) : name;
    if (!cfgUnescapeOK(addr, true) || (zone >= 0 && !cfgUnescapeOK(name.slice(zone), true, true))) return false;
    if (addr.includes("%") || !cfgIPv6(addr)) return false;
  } else {
    const first = host.indexOf(":");
    if (first >= 0) {
      const last = host.lastIndexOf(":");
      const scheme = sm[1].toLowerCase();
      const at = scheme === "http" || scheme === "https" ? first : last;
      if (!cfgPortOK(host.slice(at))) return false;
    }
    if (!cfgUnescapeOK(host, true)) return false;
  }
  if (!cfgUnescapeOK(path, false)) return false;
  return host !== "";
}

// cfgIPv6 is netip.ParseAddr(s) giving an IPv6 address (an IPv4 one is no
// IP literal): eight groups, `::` once, a dotted IPv4 tail.
function cfgIPv6(s) {
  if (!s.includes(":")) return false;
  let groups = 0;
  let body = s;
  const dotted = /(?:^|:)((?:[0-9]{1,3}\.){3}[0-9]{1,3})$/.exec(s);
  if (dotted) {
    if (!dotted[1].split(".").every((p) => Number(p) <= 255 && !/^0[0-9]/.test(p))) return false;
    body = s.slice(0, s.length - dotted[1].length);
    if (body.endsWith(":") && !body.endsWith("::")) body = body.slice(0, -1);
    groups += 2;
  }
  const halves = body.split("::");
  if (halves.length > 2) return false;
  const parts = halves.map((h) => (h === "" ? [] : h.split(":")));
  for (const list of parts) {
    for (const g of list) if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return false;
    groups += list.length;
  }
  return halves.length === 2 ? groups < 8 || (groups <= 8 && false) : groups === 8;
}

function cfgCodePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// configProblem is ir.ValueProblem: why text does not fit t (a plan type),
// "" when it fits; the sentence never repeats the value. lib holds the
// reader's grammars: { validEmail, instant, validDuration, compilePattern }.
export function configProblem(t, text, lib) {
  const rules = t.rules;
  switch (t.kind) {
    case "int": {
      if (!/^[+-]?[0-9]+$/.test(text)) return "is not a whole number: write digits, such as 10, from -9223372036854775808 to 9223372036854775807";
      const v = BigInt(text);
      if (v < CFG_INT64_MIN || v > CFG_INT64_MAX) return "is not a whole number: write digits, such as 10, from -9223372036854775808 to 9223372036854775807";
      return cfgBounds(rules, text);
    }
    case "decimal":
      if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return "is not a number: write digits with an optional fraction, such as 12.50";
      return cfgBounds(rules, text);
    case "bool":
      return CFG_BOOLS.has(text) ? "" : "is not true or false";
    case "duration":
      return lib.validDuration(text) ? "" : "is not a duration: write " + CFG_DURATION_GRAMMAR;
    case "enum":
      return (t.variants || []).includes(text) ? "" : "is not one of " + (t.variants || []).join(", ");
    case "url":
      if (!cfgAbsoluteURL(text)) return "is not an absolute URL (scheme and host, such as https://example.com)";
      break;
    case "email":
      if (!lib.validEmail(text)) return CFG_EMAIL;
      break;
    case "uuid":
      if (!CFG_UUID.test(text)) return "is not a UUID (8-4-4-4-12 hexadecimal digits)";
      break;
    case "instant":
      if (lib.instant(text) === null) return "is not an RFC 3339 instant (such as 2026-01-31T09:30:00Z)";
      break;
  }
  if (!rules) return "";
  const n = cfgCodePoints(text);
  if (rules.min_length !== undefined && n < rules.min_length) return `is shorter than the minimum length ${rules.min_length}`;
  if (rules.max_length !== undefined && n > rules.max_length) return `is longer than the maximum length ${rules.max_length}`;
  for (const p of rules.patterns || []) {
    let re;
    try {
      re = lib.compilePattern(p);
    } catch {
      return `cannot be checked: the pattern \`${p}\` does not compile`;
    }
    if (!re.test(text)) return `does not match the pattern \`${p}\``;
  }
  if (rules.format === "email" && !lib.validEmail(text)) return CFG_EMAIL;
  return "";
}

// checkConfig holds each config value the Worker's environment gives to its
// field's type: the problems, one a field, as the native runtime's
// ConfigError writes them (the field and its binding, never the value). A
// value that is unset or empty is the default's, which the checker held to
// the rules; a required field the Worker does not use (the pull consumer's
// account and token) need not be set, so an unset one is not a problem here.
export function checkConfig(plan, env, lib) {
  const problems = [];
  for (const f of plan.config || []) {
    const v = env ? env[f.binding] : undefined;
    if (v === undefined || (v === "" && !f.type.optional)) continue;
    const p = configProblem(f.type, String(v), lib);
    if (p !== "") problems.push({ field: f.name, binding: f.binding, problem: p });
  }
  return problems;
}

// withConfigCheck wraps the Worker's handlers so that each holds its
// environment's config to the rules before doing anything: a Worker whose
// config does not fit does no work (a batch is handed back, retried as in a
// D1 outage), and says why once per environment, in one log line that names
// each field and binding and never a value.
export function withConfigCheck(plan, handlers, lib) {
  const seen = new WeakMap();
  function check(env) {
    if (env === null || typeof env !== "object") env = {};
    let problems = seen.get(env);
    if (problems === undefined) {
      problems = checkConfig(plan, env, lib);
      seen.set(env, problems);
      if (problems.length > 0) {
        console.error(JSON.stringify({ msg: "cannot start: config problems", problems }));
      }
    }
    if (problems.length > 0) {
      const lines = problems.map((p) => `config field ${p.field} (binding ${p.binding}) ${p.problem}`);
      throw Object.assign(new Error("cannot start: " + lines.join("; ")), { configProblems: problems });
    }
  }
  const out = {};
  for (const [name, fn] of Object.entries(handlers)) {
    // queue(batch, env, ctx), scheduled(controller, env, ctx): env second;
    // deliver(env): env first.
    const at = name === "deliver" ? 0 : 1;
    out[name] = (...args) => {
      check(args[at]);
      return fn(...args);
    };
  }
  return out;
}
