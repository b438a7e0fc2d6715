package catalogdoc

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/diag"
)

var update = flag.Bool("update", false, "rewrite "+Dir)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCataloguePages keeps docs/reference/packages/ true to the catalogue:
// each page is written from the package as the checker reads it, and its
// example connection checks clean.
func TestCataloguePages(t *testing.T) {
	pages, diags := Pages()
	if diags.HasErrors() {
		var b strings.Builder
		diag.WriteText(&b, diags, diag.TextOptions{})
		t.Fatalf("the catalogue's packages with the pages' example connections do not check clean:\n%s", b.String())
	}
	dir := filepath.Join(repoRoot(t), filepath.FromSlash(Dir))
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range pages {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s/%s is stale: run `%s`", Dir, name, Regenerate)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v: run `%s`", Dir, err, Regenerate)
	}
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok {
			t.Errorf("%s/%s is no catalogue package's page: run `%s`", Dir, e.Name(), Regenerate)
		}
	}
}

// The page must say what a user needs: a setting's type and default, and an
// operation of the mapping.
func TestCataloguePageNamesSettingsAndMapping(t *testing.T) {
	pages, diags := Pages()
	if diags.HasErrors() {
		t.Fatal("the catalogue does not check clean; see TestCataloguePages")
	}
	sqs := pages["AmazonSqs.v2012_11_05.md"]
	for _, want := range []string{
		"- `wait_time_seconds`: `WaitTimeSeconds` — Int, from 0 to 20; default `0`.",
		"- `queue_url`: `Url`; required.",
		"Receive: `messages.receive_message`",
		"### `messages.delete_message_batch`",
		"queue_url: config.amazon_sqs_queue_url",
	} {
		if !strings.Contains(sqs, want) {
			t.Errorf("the SQS page lacks %q:\n%s", want, sqs)
		}
	}
	if inbox := pages["SqlInbox.v1.md"]; !strings.Contains(inbox, "- `lease`: `Duration`; default `30s`.") {
		t.Errorf("the SQL inbox page does not give lease's default:\n%s", inbox)
	}
}
