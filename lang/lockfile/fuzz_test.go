package lockfile

import (
	"strings"
	"testing"
)

// FuzzLock: Parse and Index never panic, agree on what they accept, and a
// parsed lock written back parses to the same packages and files.
func FuzzLock(f *testing.F) {
	d := "sha256:" + strings.Repeat("a", 64)
	f.Add([]byte("# c\nAmazonSqs.v2012_11_05 " + d + "\n  package.jadpo " + d + "\n  resources/messages.jadpo " + d + "\n"))
	f.Add([]byte("A.v1 " + d + "\r\nB.v2 " + d + "\r\n\t x.jadpo " + d + "\r\n"))
	f.Add([]byte("  orphan " + d + "\n"))
	f.Add([]byte("A.v1 sha256:xyz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		full, perr := Parse(data)
		idx, ierr := Index(data)
		if perr == nil && ierr != nil {
			t.Fatalf("Parse accepted what Index refused: %v", ierr)
		}
		if perr != nil {
			return
		}
		for _, e := range full.Entries {
			ie, ok := idx.Get(e.Name)
			if !ok || ie.Digest != e.Digest {
				t.Fatalf("%s: Index %+v, Parse %+v", e.Name, ie, e)
			}
			for p, dg := range e.Files {
				if got, ok := ie.File(p); !ok || got != dg {
					t.Fatalf("%s %s: Index %q %v, Parse %q", e.Name, p, got, ok, dg)
				}
			}
		}
		back, err := Parse(full.Bytes())
		if err != nil {
			t.Fatalf("a written lock does not parse: %v", err)
		}
		if len(back.Entries) != len(full.Entries) {
			t.Fatalf("round trip lost packages")
		}
	})
}
