package lockfile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzLock: Parse never panics; a lock it accepts writes back (Bytes) to
// text that parses to the same packages and files, and that text is a
// fixed point: written again, byte for byte the same. A parse error names a
// line and column inside the input. The seeds include the lock injections
// of issue 11: names with spaces, newlines and control bytes.
func FuzzLock(f *testing.F) {
	d := "sha256:" + strings.Repeat("a", 64)
	e := "sha256:" + strings.Repeat("b", 64)
	f.Add([]byte("# c\nAmazonSqs.v2012_11_05 " + d + "\n  package.jadpo " + d + "\n  resources/messages.jadpo " + d + "\n"))
	f.Add([]byte("A.v1 " + d + "\r\nB.v2 " + d + "\r\n\t x.jadpo " + d + "\r\n"))
	f.Add([]byte("  orphan " + d + "\n"))
	f.Add([]byte("A.v1 sha256:xyz\n"))
	f.Add([]byte("A.v1 " + d + "\n  resources/a b.jadpo " + e + "\n"))
	f.Add([]byte("A.v1 " + d + "\n  resources/a\nPhantom.v1 " + e + "\n  x.jadpo " + e + "\n"))
	f.Add([]byte("A.v1 " + d + "\n  resources/a\x00b.jadpo " + e + "\n"))
	f.Add([]byte("A.v1 " + d + "\n  resources/a\x1b[2Jb.jadpo " + e + "\n"))
	f.Add([]byte("A.v1\u00a0" + d + "\n"))
	f.Add([]byte("A.v1 " + d + "\n  x.jadpo " + e + "\n  x.jadpo " + e + "\n"))
	f.Add([]byte("A.v1 " + d + "\n\n   # indented comment\n  ../x.jadpo " + e + "\n"))
	f.Add([]byte("B.v1 " + d + "\nA.v1 " + e + "\n  .hidden " + e + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			pe, ok := err.(*ParseError)
			if !ok {
				t.Fatalf("not a ParseError: %T %v", err, err)
			}
			if pe.Offset < 0 || pe.Offset+pe.Len > len(data) || pe.Line < 1 || pe.Col < 1 ||
				bytes.Count(data[:pe.Offset], []byte{'\n'})+1 != pe.Line ||
				pe.Offset-(bytes.LastIndexByte(data[:pe.Offset], '\n')+1)+1 != pe.Col {
				t.Fatalf("error at %d:%d (offset %d, len %d) does not fit the %d bytes: %v", pe.Line, pe.Col, pe.Offset, pe.Len, len(data), err)
			}
			return
		}
		out, err := l.Bytes()
		if err != nil {
			t.Fatalf("a parsed lock cannot be written: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("a written lock does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back.Entries, l.Entries) {
			t.Fatalf("round trip changed the lock:\n%+v\n%+v", l.Entries, back.Entries)
		}
		again, err := back.Bytes()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("written twice, the text changed (%v):\n%s\n%s", err, out, again)
		}
	})
}
