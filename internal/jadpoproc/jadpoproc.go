// Package jadpoproc runs the jadpo binary as a child process, for the tests
// that need a real process (signals, SIGKILL, exit codes, the language
// server on stdio): cmd/jadpo built once per test run (Binary, with Main as
// the package's TestMain), and a started process (Start) waited on once in
// the background, killed when the test ends if it still runs, its exit code
// read back.
//
// It is the one copy for cmd/jadpo's tests and runtime/internal/processtest
// (the runs killed while messages flow); it imports nothing of the module
// but internal/reporoot and runs the go command to build, so it stands
// below every stage.
package jadpoproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
)

var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

// Main is a test package's TestMain for Binary: it runs the tests with a
// folder for the binary and removes the folder after.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "jadpo-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Binary builds cmd/jadpo once for the whole test run and returns its path.
// The test package's TestMain must be Main.
func Binary(t testing.TB) string {
	t.Helper()
	if binDir == "" {
		t.Fatal("jadpoproc.Binary: the test package's TestMain must call jadpoproc.Main(m)")
	}
	binOnce.Do(func() { binPath, binError = Build(reporoot.Dir(t), binDir) })
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// Build builds cmd/jadpo of the repository at root into dir and returns the
// binary's path.
func Build(root, dir string) (string, error) {
	// The go command on PATH, else $GOROOT's (go test runs with PATH as
	// it found it, and may have been started by a full path).
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("GOROOT") == "" {
			return "", fmt.Errorf("no go command to build cmd/jadpo: %w", err)
		}
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(dir, "jadpo")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/jadpo")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/jadpo: %v\n%s", err, out)
	}
	return bin, nil
}

// Proc is a started child process.
type Proc struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
	// after runs once the process has ended (closing its log file).
	after func()
}

// Start starts cmd, as the caller set it up (its Env, Dir, Stdout, Stderr,
// Stdin), and waits for it in the background; the process is killed when
// the test ends if it is still running. after, when not nil, runs once the
// process has ended.
func Start(t testing.TB, cmd *exec.Cmd, after func()) *Proc {
	t.Helper()
	if err := cmd.Start(); err != nil {
		if after != nil {
			after()
		}
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{}), after: after}
	go func() {
		p.err = cmd.Wait()
		if p.after != nil {
			p.after()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Kill sends SIGKILL and waits for the process to end.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits up to timeout for the process to end; it
// returns the process's exit error (nil for exit 0), or an error when it
// did not end in time (it is then killed).
func (p *Proc) Stop(timeout time.Duration) error {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		return errors.New("did not stop within " + timeout.String() + " of SIGTERM")
	}
}

// Err waits for the process to end and returns its exit error.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// ExitCode waits up to bound for the process to end and returns its exit
// code; a process still running then is killed and fails the test, as does
// one that could not be waited on.
func (p *Proc) ExitCode(t testing.TB, what string, bound time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(bound):
		p.Kill()
		t.Fatalf("%s: still running %s later", what, bound)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("%s: %v", what, p.err)
	}
	return 0
}
