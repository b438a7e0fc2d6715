// The TextMate grammar against the Go toolchain's own reading of every
// .jadpo source of the repository (examples/, testdata/, the catalogue's
// packages and the language reference's examples): each word the lexer
// and the parser call a keyword, a text, a number, a comment, a built-in
// type or a declared name gets the matching scope, and no other word gets
// a keyword's, a text's, a number's or a comment's. The Go side is
// cmd/internal/lsp's TestGrammarTokens, run here (or its output named by
// JADPO_GRAMMAR_TOKENS), so a construct the language gains without a
// grammar rule fails this test.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { loadGrammar, tokenize } = require('./textmate');

const repo = path.join(__dirname, '..', '..', '..');

function goTokens() {
  let file = process.env.JADPO_GRAMMAR_TOKENS;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jadpo-grammar-')), 'tokens.json');
    execFileSync(process.env.GO || 'go', ['test', '-count=1', '-run', '^TestGrammarTokens$', './cmd/internal/lsp'], {
      cwd: repo, env: { ...process.env, JADPO_GRAMMAR_TOKENS: file }, stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// category is what a TextMate token's scopes make it, innermost meaning first.
function category(scopes) {
  const has = (re) => scopes.some((s) => re.test(s));
  if (has(/^comment\./)) return 'comment';
  if (has(/^string\./)) return 'string';
  if (has(/^constant\.numeric/)) return 'number';
  if (has(/^(keyword|storage)\./) || has(/^constant\.language\./)) return 'keyword';
  return 'other';
}

const expected = {
  keyword: (s) => category(s) === 'keyword',
  string: (s) => category(s) === 'string',
  number: (s) => category(s) === 'number',
  comment: (s) => category(s) === 'comment',
  builtinType: (s) => category(s) === 'other' && s.some((x) => x.startsWith('support.type.')),
  declaration: (s) => category(s) === 'other' && s.some((x) => x.startsWith('entity.name.')),
  name: (s) => category(s) === 'other',
};

test('every word of every source gets the scope the Go lexer and parser give it', async () => {
  const grammar = await loadGrammar();
  const files = goTokens();
  assert.ok(files.length >= 50, `only ${files.length} sources`);
  const failures = [];
  let checked = 0;
  for (const f of files) {
    const lines = tokenize(grammar, f.text);
    for (const t of f.tokens) {
      const line = lines[t.line] || [];
      const over = line.filter((tm) => tm.startIndex < t.char + t.len && tm.endIndex > t.char);
      checked++;
      const bad = over.length === 0 ? ['(no token)'] : over.filter((tm) => !expected[t.kind](tm.scopes)).map((tm) => tm.scopes.slice(1).join(' '));
      if (bad.length > 0) {
        failures.push(`${f.path}:${t.line + 1}:${t.char + 1}: ${JSON.stringify(t.text)} is a ${t.kind}, the grammar says ${bad[0] || '(nothing)'}`);
      }
    }
  }
  assert.ok(checked > 1000, `only ${checked} words checked`);
  assert.deepStrictEqual(failures.slice(0, 40), [], `${failures.length} words scoped wrong`);
});
