package install

import (
	"testing"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

// The catalogue's package installs cleanly and verifies.
func TestInstallFromCatalogue(t *testing.T) {
	dir := t.TempDir()
	changed, err := Install(dir, "AmazonSqs.v2012_11_05", catalog.Files("AmazonSqs.v2012_11_05"))
	if err != nil || !changed {
		t.Fatalf("install: %v %v", changed, err)
	}
	if problems, err := lockfile.Verify(dir, catalog.Builtin); err != nil || len(problems) != 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
}
func TestResendInstalls(t *testing.T) {
	dir := t.TempDir()
	changed, err := Install(dir, "Resend.v1", catalog.Files("Resend.v1"))
	if err != nil || !changed {
		t.Fatalf("install: %v %v", changed, err)
	}
	if problems, err := lockfile.Verify(dir, catalog.Builtin); err != nil || len(problems) != 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
}
