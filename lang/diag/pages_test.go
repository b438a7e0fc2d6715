package diag

import "testing"

// Every code's page says what it means and gives its usual causes; no page
// is kept for a code the catalogue no longer has.
func TestEveryCodeHasAPage(t *testing.T) {
	for code := range Catalogue {
		p, ok := Pages[code]
		if !ok {
			t.Errorf("code %s has no entry in Pages (lang/diag/pages.go): say what it means and its usual causes", code)
			continue
		}
		if len(p.Means) < 20 || len(p.Causes) == 0 {
			t.Errorf("code %s's page says too little: %+v", code, p)
		}
	}
	for code := range Pages {
		if _, ok := Catalogue[code]; !ok {
			t.Errorf("Pages has %s, which the catalogue does not", code)
		}
	}
}
