package workers

import (
	"os"
	"regexp"
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
