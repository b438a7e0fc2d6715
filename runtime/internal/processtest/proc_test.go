package processtest

// `jadpo run` as a child process: the binary built once, a process whose
// output goes to a log file, and that log read back.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// buildJadpo builds cmd/jadpo into dir and returns the binary's path.
func buildJadpo(root, dir string) (string, error) {
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

// Proc is a `jadpo run` child process.
type Proc struct {
	Cmd *exec.Cmd
	// Log is the file its output (JSON log lines) goes to.
	Log  string
	done chan struct{}
	err  error
}

// startWarehouse starts `bin run examples/warehouse --database <StoreURL>
// --log-format json` and extra args in e's world, with its config in the
// process's environment and its output appended to logPath. The process is
// killed when the test ends if it is still running.
func startWarehouse(e *runtimetest.Env, bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", filepath.Join(reporoot.Dir(e.T), "examples", "warehouse"),
		"--database", e.StoreURL, "--log-format", "json"}, extra...)
	return startProc(e.T, bin, args, runtimetest.ChildEnviron(e.Environ), logPath)
}

// startProc starts bin with args and environ, its output appended to
// logPath; the process is killed when the test ends if it is still running.
func startProc(t testing.TB, bin string, args, environ []string, logPath string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = environ
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, Log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
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

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
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

// Err is the process's exit error once it has ended.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// logLines counts the JSON log lines of the file at path by their msg, and
// returns the lines that are not JSON (a panic, a start-up error).
func logLines(t testing.TB, path string) (byMsg map[string]int, other []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byMsg = map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Msg == "" {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				other = append(other, s)
			}
			continue
		}
		byMsg[line.Msg]++
	}
	return byMsg, other
}

// Logged reports whether the process has written a JSON log line with msg
// ("running": it has started ticking, and a SIGTERM now lets it finish).
func (p *Proc) Logged(msg string) bool {
	b, err := os.ReadFile(p.Log)
	return err == nil && strings.Contains(string(b), `"msg":"`+msg+`"`)
}
