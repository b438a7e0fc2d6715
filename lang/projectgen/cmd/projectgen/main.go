// Command projectgen writes a generated project to a directory, for
// measuring the jadpo binary on it (docs/performance.md):
//
//	go run ./lang/projectgen/cmd/projectgen -bytes 52428800 /tmp/big
//	/usr/bin/time -v bin/jadpo check /tmp/big
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/jadpo/jadpo/lang/projectgen"
)

func main() {
	lines := flag.Int("lines", 0, "about this many lines in all")
	size := flag.Int("bytes", 0, "about this many bytes of .jadpo source (instead of -lines)")
	flag.Parse()
	if flag.NArg() != 1 || (*lines > 0) == (*size > 0) {
		fmt.Fprintln(os.Stderr, "usage: projectgen -lines N | -bytes N DIR")
		os.Exit(2)
	}
	fsys := projectgen.Generate(*lines)
	if *size > 0 {
		fsys = projectgen.GenerateBytes(*size)
	}
	names := make([]string, 0, len(fsys))
	for name := range fsys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(flag.Arg(0), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, fsys[name].Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("%s: %d bytes of .jadpo in %d files\n", flag.Arg(0), projectgen.Bytes(fsys), len(projectgen.Files(fsys)))
}
