package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
)

// docs/reference/json.md documents every field users script against. This
// test runs each command that prints JSON, on a store holding every kind of
// entry, and fails for each field printed that the section of its kind
// (### <kind>) does not name in backticks; the envelope's fields are named
// once, in "## The envelope".

const jsonDocsPage = "docs/reference/json.md"

var backtickRE = regexp.MustCompile("`([^`]*)`")

// jsonDocSections maps each kind to the words its section names in backticks.
func jsonDocSections(t *testing.T, md string) (envelope map[string]bool, kinds map[string]map[string]bool) {
	t.Helper()
	fenced := regexp.MustCompile("(?ms)^```.*?^```")
	words := func(text string) map[string]bool {
		out := map[string]bool{}
		// An example documents nothing: only the prose and tables count.
		for _, m := range backtickRE.FindAllStringSubmatch(fenced.ReplaceAllString(text, ""), -1) {
			for _, w := range regexp.MustCompile(`[A-Za-z0-9_]+`).FindAllString(m[1], -1) {
				out[w] = true
			}
		}
		return out
	}
	kinds = map[string]map[string]bool{}
	parts := regexp.MustCompile(`(?m)^#{2,3} `).Split(md, -1)
	for _, part := range parts {
		title, body, _ := strings.Cut(part, "\n")
		switch {
		case title == "The envelope":
			envelope = words(body)
		case !strings.Contains(title, " "):
			kinds[title] = words(body)
		}
	}
	// A section naming another kind ("one entry as in `delivery_list`") takes its fields.
	for _, words := range kinds {
		for other, ow := range kinds {
			if words[other] {
				for w := range ow {
					words[w] = true
				}
			}
		}
	}
	if envelope == nil || len(kinds) < 8 {
		t.Fatalf("%s has no \"## The envelope\" or fewer than 8 \"### <kind>\" sections: %v", jsonDocsPage, kinds)
	}
	return envelope, kinds
}

// jsonFields lists every object key of a JSON document, nested ones too, with
// its path (entries.problems.field). A map keyed by data (context, headers)
// is a field; its keys are data, not fields.
func jsonFields(v any, path string, data map[string]bool, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			out[p] = k
			if !data[k] {
				jsonFields(val, p, data, out)
			}
		}
	case []any:
		for _, e := range x {
			jsonFields(e, path, data, out)
		}
	}
}

func TestJSONFieldsAreDocumented(t *testing.T) {
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, jsonDocsPage))
	if err != nil {
		t.Fatal(err)
	}
	envelope, kinds := jsonDocSections(t, string(md))

	w := newDeliveriesWorld(t, "sqlite")
	ctx := context.Background()
	if _, err := w.st.KeepBatch(ctx, []store.Keep{{
		Source: "queue jobs", ReceivedID: "job-7", EventName: "JobQueued",
		EventJSON: []byte(`{"job_id":"job-7"}`), Subscribers: []string{"run_job"}, Headers: map[string]string{"tenant": "acme"},
	}}); err != nil {
		t.Fatal(err)
	}
	var outputs []string
	runJSON := func(args ...string) {
		t.Helper()
		_, out, _ := w.cli(t, args...)
		outputs = append(outputs, out)
	}
	runJSON("deliveries", "--state", "all", "--format", "json")
	runJSON("deliveries", "show", w.failed.String(), "--body", "--format", "json")
	runJSON("deliveries", "show", w.unreadble.String(), "--body", "--format", "json")
	runJSON("deliveries", "show", "p99", "--format", "json")
	runJSON("deliveries", "retry", w.failed.String(), "--format", "json")
	runJSON("deliveries", "dismiss", w.unlisted.String(), "--format", "json")
	runJSON("store", "stats", "--format", "json")
	for _, args := range [][]string{
		{"package", "list", exampleDir(t), "--format", "json"},
		{"package", "list", "--catalogue", "--format", "json"},
	} {
		_, out, _ := cli(t, args...)
		outputs = append(outputs, out)
	}
	// The check report's fields: every golden JSON report, which covers every code.
	goldens, _ := filepath.Glob(filepath.Join(root, "testdata", "golden", "*.json"))
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"kind": "diagnostic_report"`) {
			outputs = append(outputs, string(b))
		}
	}

	seenKinds := map[string]bool{}
	data := map[string]bool{"context": true, "headers": true}
	for _, out := range outputs {
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		kind, _ := doc["kind"].(string)
		seenKinds[kind] = true
		section, ok := kinds[kind]
		if !ok {
			t.Errorf("kind %q has no section \"### %s\" in %s", kind, kind, jsonDocsPage)
			continue
		}
		fields := map[string]string{}
		jsonFields(doc, "", data, fields)
		var missing []string
		for path, name := range fields {
			if !section[name] && !(envelope[name] && !strings.Contains(path, ".")) {
				missing = append(missing, path)
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			t.Errorf("%s: kind %s prints %q, which its section does not name", jsonDocsPage, kind, m)
		}
	}
	for _, k := range []string{"diagnostic_report", "delivery_list", "delivery_entry", "delivery_change", "store_stats", "package_list", "package_catalogue", "error"} {
		if !seenKinds[k] {
			t.Errorf("no command run here printed kind %s: the test misses a command", k)
		}
	}
}
