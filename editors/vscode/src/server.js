// How the extension starts the language server: `jadpo lsp`, the binary
// named by the setting jadpo.path, else `jadpo` from PATH. Kept apart from
// extension.js (which needs VS Code) so a test can call it.
'use strict';

// serverCommand is the binary the setting names ("" or unset: jadpo from PATH).
function serverCommand(configuredPath) {
  const p = typeof configuredPath === 'string' ? configuredPath.trim() : '';
  return p === '' ? 'jadpo' : p;
}

// serverExecutable is vscode-languageclient's Executable for the server:
// the command and its one argument `lsp`. It talks over standard input and
// output; no `transport` is named, because with TransportKind.stdio the
// client appends `--stdio` to the arguments, which `jadpo lsp` refuses.
function serverExecutable(configuredPath) {
  return { command: serverCommand(configuredPath), args: ['lsp'] };
}

// notFoundMessage is what the user reads when the binary cannot be started.
function notFoundMessage(command, err) {
  return `jadpo: could not start \`${command} lsp\` (${err && err.message ? err.message : err}). ` +
    'Install jadpo (`make install` puts it in ~/.local/bin) or set "jadpo.path" to the binary\'s full path, then run "jadpo: Restart the language server".';
}

module.exports = { serverCommand, serverExecutable, notFoundMessage };
