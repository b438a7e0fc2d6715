package diag

import "testing"

// Every code's row says what it means and gives its usual causes: its page
// (docs/diagnostics/<code>.md) is made from them.
func TestEveryCodeHasAPage(t *testing.T) {
	for code, e := range Catalogue {
		if len(e.Means) < 20 || len(e.Causes) == 0 {
			t.Errorf("code %s's row in lang/diag/codes.go says too little for its page: say what it means (Means) and its usual causes (Causes): %+v", code, e)
		}
	}
}
