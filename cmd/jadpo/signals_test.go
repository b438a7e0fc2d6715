package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/jadpoproc"
)

// exitWithin is how long a process told to end may take before the test
// kills it and fails.
const exitWithin = 20 * time.Second

// Issue 11, point 7: main catches SIGINT and SIGTERM (for `run`), so the
// other commands ignored them: a blocked `jadpo check` was alive 70 minutes
// after `timeout 10`. check, build, package, lsp and deliveries now end on
// either signal, with the shell's code for it (130, 143).
func TestCommandsEndOnSignal(t *testing.T) {
	bin := jadpoproc.Binary(t)

	// The language server waits on stdin, which the editor keeps open.
	lsp := func(t *testing.T, sig syscall.Signal, want int) {
		cmd := exec.Command(bin, "lsp")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		p := jadpoproc.Start(t, cmd, nil)
		defer stdin.Close()
		c := newLSPClient(t, stdout, stdin)
		c.Send(1, "initialize", map[string]any{})
		c.Next() // it is serving, its signal handling in place
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if code := p.ExitCode(t, "jadpo lsp after "+sig.String(), exitWithin); code != want {
			t.Fatalf("exit %d, want %d; stderr: %s", code, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "jadpo: stopped by SIG") {
			t.Errorf("stderr %q does not say why it stopped", stderr.String())
		}
	}
	t.Run("lsp/SIGTERM", func(t *testing.T) { lsp(t, syscall.SIGTERM, 143) })
	t.Run("lsp/SIGINT", func(t *testing.T) { lsp(t, syscall.SIGINT, 130) })

	// deliveries waits on a database that accepts and never answers.
	t.Run("deliveries/SIGTERM", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- c
			}
		}()
		cmd := exec.Command(bin, "deliveries", "list", "--dir", t.TempDir(),
			"--database", fmt.Sprintf("postgres://jadpo@%s/silent?sslmode=disable", ln.Addr()))
		cmd.Env = childEnv()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		p := jadpoproc.Start(t, cmd, nil)
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(20 * time.Second):
			t.Fatal("jadpo deliveries never connected")
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.ExitCode(t, "jadpo deliveries after SIGTERM", exitWithin); code != 143 {
			t.Fatalf("exit %d, want 143; stderr: %s", code, stderr.String())
		}
	})
}

// check and build end on a signal whatever they wait on: here, writing a
// report larger than a pipe's buffer to a reader that stopped reading (a
// paused `jadpo check | less`). They cannot end by themselves, so the exit
// status is the signal's.
func TestCheckAndBuildEndOnSignalWhileBlocked(t *testing.T) {
	bin := jadpoproc.Binary(t)
	dir := t.TempDir()
	copyExampleInto(t, "returns", dir)
	for i := 0; i < 1000; i++ { // 1,000 files of one error each: far more than 64 KB of report
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("broken_%04d.jadpo", i)), []byte("type Broken = {\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", dir, "--format", "json"}, {"build", dir}} {
		cmd := exec.Command(bin, args...)
		var out io.Reader
		var err error
		if args[0] == "check" {
			out, err = cmd.StdoutPipe() // the JSON report
		} else {
			out, err = cmd.StderrPipe() // the text report
		}
		if err != nil {
			t.Fatal(err)
		}
		p := jadpoproc.Start(t, cmd, nil)
		if _, err := io.ReadFull(out, make([]byte, 1)); err != nil { // it is reporting: its handler is in place
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.ExitCode(t, args[0]+" blocked writing, after SIGTERM", exitWithin); code != 143 {
			t.Fatalf("%s: exit %d, want 143", args[0], code)
		}
	}
}

// Issue 11, point 7: a named pipe as app.jadpo or as a module hung `check`
// and `build` forever. They now say what the file is, and end.
func TestCheckAndBuildRefuseANamedPipe(t *testing.T) {
	bin := jadpoproc.Binary(t)
	for _, name := range []string{"app.jadpo", "stock.jadpo"} {
		for _, command := range []string{"check", "build"} {
			dir := t.TempDir()
			copyExampleInto(t, "returns", dir)
			if name == "app.jadpo" {
				os.Remove(filepath.Join(dir, name))
			}
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, command, dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Stdout = io.Discard
			code := jadpoproc.Start(t, cmd, nil).ExitCode(t, command+" with "+name+" a named pipe", exitWithin)
			want := fmt.Sprintf("cannot read `%s`: it is a named pipe, not a regular file", name)
			if code != 1 || !strings.Contains(stderr.String(), want) {
				t.Errorf("%s with %s a named pipe: exit %d, stderr:\n%s\nwant exit 1 and %q", command, name, code, stderr.String(), want)
			}
		}
	}
}

func copyExampleInto(t *testing.T, name, dir string) {
	t.Helper()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", name), dir); err != nil {
		t.Fatal(err)
	}
}
