package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/jadpoproc"
	"github.com/jadpo/jadpo/runtime/store"
)

// The getting-started page runs as written: its ```sh blocks are the steps
// (in one shell, in order, with the built jadpo first on PATH), a ```jadpo
// file=PATH block is a file the reader writes there, and a ```text input block
// is what the reader types into the step before it. ```shell blocks need
// real credentials or a machine's own setup (installing, production) and are
// shown, not run. So the page cannot drift from the tool: the app it writes
// checks clean, and jadpo dev keeps the message it types.

const gettingStartedPage = "docs/guide/getting-started.md"

type pageBlock struct {
	info, body string
}

var fenceRE = regexp.MustCompile("(?ms)^```([^\\n]*)\\n(.*?)^```\\s*$")

func pageBlocks(md string) []pageBlock {
	var out []pageBlock
	for _, m := range fenceRE.FindAllStringSubmatch(md, -1) {
		out = append(out, pageBlock{info: strings.TrimSpace(m[1]), body: m[2]})
	}
	return out
}

// pageScript turns the page's steps into one shell script.
func pageScript(t *testing.T, blocks []pageBlock) (script string, files []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("set -e\n")
	for i := 0; i < len(blocks); i++ {
		bl := blocks[i]
		switch {
		case bl.info == "sh":
			b.WriteString("{\n" + bl.body + "}")
			if i+1 < len(blocks) && blocks[i+1].info == "text input" {
				b.WriteString(" <<'JADPO_PAGE_INPUT'\n" + blocks[i+1].body + "JADPO_PAGE_INPUT\n")
				i++
			} else {
				b.WriteString(" </dev/null\n")
			}
		case strings.HasPrefix(bl.info, "jadpo file="):
			name := strings.TrimPrefix(bl.info, "jadpo file=")
			files = append(files, name)
			b.WriteString("mkdir -p \"$(dirname '" + name + "')\"\ncat > '" + name + "' <<'JADPO_PAGE_FILE'\n" + bl.body + "JADPO_PAGE_FILE\n")
		case bl.info == "text input":
			t.Fatalf("%s: a ```text input block follows no ```sh step", gettingStartedPage)
		}
	}
	// Where the reader ends up is the app the page wrote.
	b.WriteString("pwd > \"$JADPO_PAGE_END\"\n")
	return b.String(), files
}

func TestGettingStartedPageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs jadpo dev twice")
	}
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, gettingStartedPage))
	if err != nil {
		t.Fatal(err)
	}
	blocks := pageBlocks(string(md))
	script, files := pageScript(t, blocks)
	if len(files) < 2 || !strings.Contains(script, "jadpo check") || !strings.Contains(script, "jadpo dev") {
		t.Fatalf("%s no longer writes an app, checks it and runs jadpo dev:\n%s", gettingStartedPage, script)
	}
	bin := jadpoproc.Binary(t)
	work := t.TempDir()
	end := filepath.Join(t.TempDir(), "end")
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = work
	var env []string
	for _, kv := range childEnv() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "JADPO_PAGE_END="+end, "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the steps of %s failed (%v):\n%s\nthe script:\n%s", gettingStartedPage, err, out.String(), script)
	}
	log := out.String()
	for _, want := range []string{"check passed", `"msg":"kept"`, `"event":"OrderPlaced"`, "repeat: already kept", `"reason":"unreadable"`, `"outcome":"succeeded"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the page's run printed no %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "check failed") {
		t.Errorf("a check on the page failed:\n%s", log)
	}
	app, err := os.ReadFile(end)
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(string(app))
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.ReceivedIDs != 1 || s.Outbox != 1 || s.Deliveries[store.DeliverySucceeded] != 1 {
		t.Errorf("the page's app did not keep its typed message once and deliver it: %+v\n%s", s, log)
	}
	parked := int64(0)
	for _, n := range s.Parked {
		parked += n
	}
	if parked != 1 {
		t.Errorf("the page's app parked %d messages, want 1 (the unreadable one): %+v", parked, s.Parked)
	}
}

func TestPageScriptReadsTheSteps(t *testing.T) {
	md := "x\n```sh\njadpo check\n```\n\n```jadpo file=app.jadpo\nstore main {}\n```\n\n```shell\nmake install\n```\n\n```sh\njadpo dev\n```\n\n```text input\nq {}\n```\n"
	script, files := pageScript(t, pageBlocks(md))
	if len(files) != 1 || files[0] != "app.jadpo" {
		t.Errorf("files = %v", files)
	}
	for _, want := range []string{"{\njadpo check\n} </dev/null", "cat > 'app.jadpo' <<'JADPO_PAGE_FILE'\nstore main {}\nJADPO_PAGE_FILE", "{\njadpo dev\n} <<'JADPO_PAGE_INPUT'\nq {}\nJADPO_PAGE_INPUT"} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "make install") {
		t.Errorf("a ```shell block was made a step:\n%s", script)
	}
}
