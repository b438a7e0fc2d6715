package processtest

// `jadpo run` as a child process: the binary built once, a process whose
// output goes to a log file, and that log read back.

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/jadpoproc"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// Proc is a `jadpo run` child process (jadpoproc.Proc: Exited, Kill, Stop,
// Err).
type Proc struct {
	*jadpoproc.Proc
	// Log is the file its output (JSON log lines) goes to.
	Log string
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
	return &Proc{Proc: jadpoproc.Start(t, cmd, func() { f.Close() }), Log: logPath}
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
