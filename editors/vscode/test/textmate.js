// Loads the extension's TextMate grammar with vscode-textmate and the
// Oniguruma regular expressions VS Code itself uses (vscode-oniguruma).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const grammarPath = path.join(__dirname, '..', 'syntaxes', 'jadpo.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  const onigLib = oniguruma.loadWASM(wasm).then(() => ({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }));
  const registry = new vsctm.Registry({
    onigLib,
    loadGrammar: async (scopeName) =>
      scopeName === 'source.jadpo' ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath) : null,
  });
  return registry.loadGrammar('source.jadpo');
}

// lines splits a source as the Go side counts lines: at LF, a CR before it
// not on the line, a byte order mark at the start not on the first.
function lines(text) {
  return text.replace(/^\uFEFF/, '').split('\n').map((l) => l.replace(/\r$/, ''));
}

// tokenize is each line's TextMate tokens: { startIndex, endIndex, scopes }.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  return lines(text).map((line) => {
    const r = grammar.tokenizeLine(line, stack);
    stack = r.ruleStack;
    return r.tokens;
  });
}

module.exports = { loadGrammar, tokenize, lines, grammarPath };
