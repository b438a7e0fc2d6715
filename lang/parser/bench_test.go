package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/source"
)

// BenchmarkParseLongLine: N stray characters on one line, N diagnostics.
// Time and memory per op grow with N (docs/performance.md, "Long lines and
// large files"); a scan of every problem per declaration made it N².
func BenchmarkParseLongLine(b *testing.B) {
	for _, n := range []int{16000, 64000, 256000} {
		src := []byte("store primary {}\n" + strings.Repeat("- ", n) + "\n")
		b.Run(fmt.Sprintf("diagnostics=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := ParseFile(source.NewFile("app.jadpo", src)); len(diags) != n {
					b.Fatalf("%d diagnostics", len(diags))
				}
			}
		})
	}
}

// BenchmarkParseManyBadLines: N declarations each with a stray character.
func BenchmarkParseManyBadLines(b *testing.B) {
	for _, n := range []int{16000, 64000} {
		src := []byte("store primary {}\n" + strings.Repeat("type A = B -\n", n))
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				ParseFile(source.NewFile("app.jadpo", src))
			}
		})
	}
}

// BenchmarkParseFileSize parses one valid file of 1 to 8 MiB (the per-file
// limit): time and memory grow with the file.
func BenchmarkParseFileSize(b *testing.B) {
	for _, mib := range []int{1, 2, 4, 8} {
		var sb strings.Builder
		for i := 0; sb.Len() < mib<<20-200; i++ {
			fmt.Fprintf(&sb, "value Line%d {\n    sku: Text { max_length: 64 }\n    quantity: Int { min: 1 }\n    tags: List<Text>?\n}\n", i)
		}
		src := []byte(sb.String())
		b.Run(fmt.Sprintf("MiB=%d", mib), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := ParseFile(source.NewFile("big.jadpo", src)); len(diags) > 0 {
					b.Fatal(diags)
				}
			}
		})
	}
}
