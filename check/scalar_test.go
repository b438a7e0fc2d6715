package check

import "testing"

// TestScalarKindSwitch: typeOfBase's switch is scalarKinds.
func TestScalarKindSwitch(t *testing.T) {
	n := 0
	for _, name := range []string{"Text", "Int", "Decimal", "Bool", "Uuid", "Instant", "Email", "Url", "Duration", "List", "Map", "text", ""} {
		k, ok := scalarKind(name)
		want, wok := scalarKinds[name]
		if k != want || ok != wok {
			t.Errorf("scalarKind(%q) = %v, %v; scalarKinds says %v, %v", name, k, ok, want, wok)
		}
		if ok {
			n++
		}
	}
	if n != len(scalarKinds) {
		t.Errorf("scalarKind takes %d names, scalarKinds holds %d", n, len(scalarKinds))
	}
}
