package catalogdoc

import (
	"flag"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/docs/docstest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/diag"
)

var update = flag.Bool("update", false, "rewrite "+Dir)

func repoRoot(t *testing.T) string {
	t.Helper()
	return reporoot.Dir(t)
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
	docstest.Folder{Dir: Dir, Regenerate: Regenerate, Orphan: "is no catalogue package's page"}.Check(t, repoRoot(t), pages, *update)
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
