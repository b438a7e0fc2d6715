package protocol_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol/gen"
)

var update = flag.Bool("update", false, "rewrite protocol.go from gen/metaModel.json")

// TestGenerated keeps protocol.go what the generator writes from the
// metaModel: a hand edit, or a change to gen.Types not regenerated, fails
// here. `go test ./cmd/internal/lsp/protocol -run Generated -update`
// rewrites it.
func TestGenerated(t *testing.T) {
	model, err := os.ReadFile("gen/metaModel.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := gen.Generate(model)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("protocol.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("protocol.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("protocol.go is not what cmd/internal/lsp/protocol/gen writes from gen/metaModel.json: run `go test ./cmd/internal/lsp/protocol -run Generated -update` and review the diff")
	}
}
