package checktest

import (
	"strings"
	"testing"
)

// A test package that checks projects without handing in the catalogue is
// told how to: checktest may not take it from providers itself.
func TestUnwiredSaysHowToWire(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "checktest.Wire(catalog.Builtin, check.Drivers(providers.Contracts()))") {
			t.Errorf("LoadDir without Wire: panic %q, want one naming the Wire call", msg)
		}
	}()
	LoadDir(t.TempDir())
}
