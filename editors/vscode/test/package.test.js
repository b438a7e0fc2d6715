// The extension as VS Code installs it: `vsce package` builds the .vsix
// (the bundle by esbuild, no node_modules), and its manifest contributes
// the language, its grammar and its editing rules, activates on .jadpo
// files, and starts `jadpo lsp`.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const yauzl = require('yauzl');
const { serverExecutable, notFoundMessage } = require('../src/server');

const ext = path.join(__dirname, '..');

function readZip(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const files = {};
      zip.on('entry', (e) => {
        zip.openReadStream(e, (err2, s) => {
          if (err2) return reject(err2);
          const chunks = [];
          s.on('data', (c) => chunks.push(c));
          s.on('end', () => { files[e.fileName] = Buffer.concat(chunks).toString('utf8'); zip.readEntry(); });
        });
      });
      zip.on('end', () => resolve(files));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

let vsix;
test.before(() => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jadpo-vsix-')), 'jadpo.vsix');
  execFileSync(process.execPath, [require.resolve('@vscode/vsce/vsce'), 'package', '--no-dependencies', '--skip-license', '--out', out],
    { cwd: ext, stdio: ['ignore', 'ignore', 'inherit'] });
  vsix = out;
});

test('the .vsix holds the manifest, the bundle, the grammar and the language configuration, and no node_modules', async () => {
  const files = await readZip(vsix);
  const names = Object.keys(files).sort();
  for (const want of ['extension.vsixmanifest', 'extension/package.json', 'extension/dist/extension.js',
    'extension/syntaxes/jadpo.tmLanguage.json', 'extension/language-configuration.json', 'extension/readme.md']) {
    assert.ok(names.includes(want), `${want} is not in the .vsix: ${names.join(', ')}`);
  }
  assert.deepStrictEqual(names.filter((n) => /node_modules|\/src\/|\/test\//.test(n)), [], 'sources, tests or node_modules were packaged');
  assert.strictEqual(files['extension/syntaxes/jadpo.tmLanguage.json'], fs.readFileSync(path.join(ext, 'syntaxes', 'jadpo.tmLanguage.json'), 'utf8'));
  // The language client is bundled: the one module required from outside is vscode.
  const bundle = files['extension/dist/extension.js'];
  const required = [...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]).filter((m) => !m.startsWith('node:'));
  const builtin = new Set(require('node:module').builtinModules);
  assert.deepStrictEqual([...new Set(required.filter((m) => !builtin.has(m)))], ['vscode']);
  assert.match(bundle, /\["lsp"\]/, 'the bundle does not start `jadpo lsp`');
});

test('the manifest activates on .jadpo files and contributes the language, its grammar and the settings', async () => {
  const files = await readZip(vsix);
  const m = JSON.parse(files['extension/package.json']);
  assert.strictEqual(m.main, './dist/extension.js');
  assert.ok(m.activationEvents.includes('onLanguage:jadpo'), m.activationEvents);
  assert.ok(m.activationEvents.includes('workspaceContains:**/app.jadpo'), m.activationEvents);
  const lang = m.contributes.languages.find((l) => l.id === 'jadpo');
  assert.ok(lang && lang.extensions.includes('.jadpo'), 'no jadpo language for .jadpo');
  assert.ok(files['extension/' + lang.configuration.replace(/^\.\//, '')], 'the language configuration is not packaged');
  const g = m.contributes.grammars.find((x) => x.language === 'jadpo');
  assert.strictEqual(g.scopeName, 'source.jadpo');
  assert.strictEqual(JSON.parse(files['extension/' + g.path.replace(/^\.\//, '')]).scopeName, 'source.jadpo');
  assert.strictEqual(m.contributes.configuration.properties['jadpo.path'].default, '');
  assert.ok(m.contributes.commands.some((c) => c.command === 'jadpo.restartServer'));
  // jadpo's own semantic token types, each with a standard super type.
  const types = m.contributes.semanticTokenTypes.map((t) => t.id).sort();
  assert.deepStrictEqual(types, ['config', 'connection', 'queue', 'store', 'subscriber']);
  assert.ok(m.contributes.semanticTokenTypes.every((t) => t.superType));
  // The extension's declared dependency is the language client, pinned.
  assert.match(m.dependencies['vscode-languageclient'], /^\d+\.\d+\.\d+$/);
});

test('the client starts `jadpo lsp`: from PATH, or the binary jadpo.path names', () => {
  assert.deepStrictEqual(serverExecutable(undefined), { command: 'jadpo', args: ['lsp'] });
  assert.deepStrictEqual(serverExecutable('  '), { command: 'jadpo', args: ['lsp'] });
  assert.deepStrictEqual(serverExecutable(' /opt/jadpo/bin/jadpo '), { command: '/opt/jadpo/bin/jadpo', args: ['lsp'] });
  const msg = notFoundMessage('jadpo', new Error('spawn jadpo ENOENT'));
  assert.match(msg, /jadpo\.path/);
  assert.match(msg, /make install/);
});

test('the language configuration: // comments, brackets, indentation after an opening bracket, a comment continued on Enter', () => {
  const c = JSON.parse(fs.readFileSync(path.join(ext, 'language-configuration.json'), 'utf8'));
  assert.strictEqual(c.comments.lineComment, '//');
  assert.deepStrictEqual(c.brackets.map((b) => b.join('')).sort(), ['()', '<>', '[]', '{}']);
  const inc = new RegExp(c.indentationRules.increaseIndentPattern);
  const dec = new RegExp(c.indentationRules.decreaseIndentPattern);
  assert.ok(inc.test('subscriber pack_order {'));
  assert.ok(inc.test('        attempt packing.jobs.create_job(  // the job'));
  assert.ok(!inc.test('    retry: { max_attempts: 8 }'));
  assert.ok(dec.test('    }'));
  const rule = (before, after) => c.onEnterRules.find((r) => new RegExp(r.beforeText).test(before) && (!r.afterText || new RegExp(r.afterText).test(after)));
  assert.strictEqual(rule('    // a comment that goes', 'on here').action.appendText, '// ');
  assert.strictEqual(rule('queue q {', '}').action.indent, 'indentOutdent');
  assert.strictEqual(rule('    id_at: "id"', ''), undefined);
});

// activateBundle loads the packaged bundle as VS Code would, against a
// stand-in `vscode` module (every API a no-op, jadpo.path as given), and
// returns the processes the language client tried to start and the error
// messages it showed. Starting a process fails (ENOENT), as when jadpo is
// not installed.
async function activateBundle(bundle, configuredPath) {
  const Module = require('node:module');
  const cp = require('node:child_process');
  const spawned = [];
  const errors = [];
  const fake = (name) => new Proxy(function () {}, {
    get(_t, p) {
      if (p === 'then') return undefined;
      if (p === 'version') return '1.90.0';
      if (p === 'get' && name.endsWith('getConfiguration()')) return (k) => (k === 'path' ? configuredPath : undefined);
      if (p === 'showErrorMessage') return (msg) => { errors.push(msg); return Promise.resolve(undefined); };
      return fake(`${name}.${String(p)}`);
    },
    apply() { return fake(`${name}()`); },
    construct() { return fake(`new ${name}`); },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jadpo-bundle-'));
  const file = path.join(dir, 'extension.js');
  fs.writeFileSync(file, bundle);
  const realSpawn = cp.spawn;
  const realLoad = Module._load;
  cp.spawn = (command, args) => {
    spawned.push({ command, args });
    throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' });
  };
  Module._load = function (request, ...rest) {
    return request === 'vscode' ? fake('vscode') : realLoad.call(this, request, ...rest);
  };
  try {
    const ext = require(file);
    await ext.activate({ subscriptions: [], extensionPath: dir, asAbsolutePath: (p) => path.join(dir, p) });
    for (let i = 0; i < 50 && !errors.some((e) => /could not start/.test(e)); i++) await new Promise((r) => setTimeout(r, 20));
    await ext.deactivate();
  } finally {
    cp.spawn = realSpawn;
    Module._load = realLoad;
  }
  return { spawned, errors };
}

test('the packaged extension, activated, starts `jadpo lsp` (the binary jadpo.path names), and says how to fix a missing binary', async () => {
  const files = await readZip(vsix);
  const bundle = files['extension/dist/extension.js'];
  const fromPath = await activateBundle(bundle, '');
  assert.deepStrictEqual(fromPath.spawned, [{ command: 'jadpo', args: ['lsp'] }]);
  // Beside the client's own "couldn't create connection", ours says what to do.
  const ours = fromPath.errors.find((e) => /could not start `jadpo lsp`/.test(e));
  assert.ok(ours, `errors shown: ${fromPath.errors}`);
  assert.match(ours, /jadpo\.path/);
  assert.match(ours, /make install/);
  const configured = await activateBundle(bundle, '/opt/jadpo/bin/jadpo');
  assert.deepStrictEqual(configured.spawned, [{ command: '/opt/jadpo/bin/jadpo', args: ['lsp'] }]);
});
