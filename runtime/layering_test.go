package runtime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRuntimeKnowsNoWire holds package runtime to its side of the wall: the
// tick and the keep, park and acknowledge policy. Its files import no
// database driver and no queue driver or protocol of providers (they are
// reached through providers.OpenQueue and wire.Client), and name no
// provider's wire member (Cloudflare's, SQS's): each is its driver's.
func TestRuntimeKnowsNoWire(t *testing.T) {
	forbidden := []string{
		"github.com/jackc/pgx", "database/sql",
		"github.com/jadpo/jadpo/providers/sqlinbox", "github.com/jadpo/jadpo/providers/cfqueues",
		"github.com/jadpo/jadpo/providers/receiving", "github.com/jadpo/jadpo/providers/awsjson",
		"github.com/jadpo/jadpo/providers/jsonhttp", "github.com/jadpo/jadpo/providers/sigv4",
		"github.com/jadpo/jadpo/providers/bearer",
	}
	members := map[string]bool{
		"result": true, "lease_id": true, "ack_count": true, "acks": true, "retries": true, "delay_seconds": true,
		"md5_of_body": true, "wait_time_seconds": true, "receipt_handle": true, "entry_id": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: the runtime reaches the wire through providers.OpenQueue and wire.Client", name, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && members[s] {
					t.Errorf("%s names the wire member %q: it is its queue driver's, in providers", name, s)
				}
			}
			return true
		})
	}
	if seen < 5 {
		t.Fatalf("read %d files of package runtime: run from its folder", seen)
	}
}
