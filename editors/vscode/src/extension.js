// The jadpo extension: the .jadpo language (grammar and editing rules,
// contributed in package.json) and a language client that starts
// `jadpo lsp` for diagnostics, hover, definition, completion, semantic
// tokens and the rest (docs/guide/editors.md).
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const { serverExecutable, notFoundMessage } = require('./server');

let client;

function newClient() {
  const exe = serverExecutable(vscode.workspace.getConfiguration('jadpo').get('path'));
  const c = new LanguageClient('jadpo', 'jadpo', { run: exe, debug: exe }, {
    documentSelector: [{ scheme: 'file', language: 'jadpo' }],
    // The server asks to watch **/*.jadpo and **/jadpo.lock itself
    // (client/registerCapability), so nothing is synchronised here.
  });
  return { c, command: exe.command };
}

async function start() {
  const { c, command } = newClient();
  client = c;
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    vscode.window.showErrorMessage(notFoundMessage(command, err));
  }
}

async function stop() {
  if (client) {
    const c = client;
    client = undefined;
    await c.stop().catch(() => {});
  }
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('jadpo.restartServer', async () => { await stop(); await start(); }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('jadpo.path')) { await stop(); await start(); }
    }),
  );
  await start();
}

function deactivate() { return stop(); }

module.exports = { activate, deactivate };
