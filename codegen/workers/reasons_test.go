package workers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
)

// The Worker parks messages in the same table `jadpo deliveries` reads, so it
// must name park reasons exactly as the store does. The JavaScript cannot import
// the Go constants; this test holds the two spellings equal instead.
func TestWorkerParkReasonsAreTheStores(t *testing.T) {
	js, err := os.ReadFile("jadpo.mjs")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[store.Reason]bool{}
	for _, m := range regexp.MustCompile(`reason: "([^"]*)"`).FindAllSubmatch(js, -1) {
		r := store.Reason(m[1])
		if r == "" {
			continue // an outcome that parks nothing
		}
		if !r.Valid() {
			t.Errorf("jadpo.mjs parks with reason %q, which the store does not know (runtime/store's Reason constants)", r)
		}
		seen[r] = true
	}
	for _, r := range store.Reasons {
		if !seen[r] {
			t.Errorf("jadpo.mjs never parks with %q; the store's reasons and the Worker's differ", r)
		}
	}
}

// The Worker's delivery errors are worded as the Go runtime's for the same
// failure: each is built in jadpo.mjs's deliveryErrors, whose every builder
// the shared table's errors cases hold to the Go texts and codes
// (testdata/delivery/table.json; runtime's TestDeliveryTableErrors in Go,
// test/delivery.test.mjs in the Worker). An error given a code anywhere
// else in jadpo.mjs would escape both, as "input member X has no value" did.
func TestWorkerDeliveryErrorsAreTheTables(t *testing.T) {
	js, err := os.ReadFile("jadpo.mjs")
	if err != nil {
		t.Fatal(err)
	}
	src := string(js)
	start := strings.Index(src, "export const deliveryErrors = {\n")
	if start < 0 {
		t.Fatal("jadpo.mjs has no deliveryErrors")
	}
	end := start + strings.Index(src[start:], "\n};\n")
	block := src[start:end]
	for _, m := range regexp.MustCompile(`Object\.assign\(\s*new Error\(|\.code = `).FindAllStringIndex(src, -1) {
		if m[0] < start || m[0] > end {
			line := strings.Count(src[:m[0]], "\n") + 1
			t.Errorf("jadpo.mjs:%d gives an error a code outside deliveryErrors; build it there, with a case in testdata/delivery/table.json", line)
		}
	}
	builders := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-zA-Z]+): \(`).FindAllStringSubmatch(block, -1) {
		builders[m[1]] = true
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "delivery", "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tb struct {
		Errors []struct{ Error string } `json:"errors"`
	}
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatal(err)
	}
	cased := map[string]bool{}
	for _, c := range tb.Errors {
		cased[lowerCamel(c.Error)] = true
	}
	for b := range builders {
		if !cased[b] {
			t.Errorf("deliveryErrors.%s has no case in testdata/delivery/table.json's errors", b)
		}
	}
	for c := range cased {
		if !builders[c] {
			t.Errorf("testdata/delivery/table.json's errors name %s, which deliveryErrors does not build", c)
		}
	}
}

// lowerCamel is no_answer as noAnswer, event_not_json as eventNotJSON.
func lowerCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] == "json" {
			parts[i] = "JSON"
		} else if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
