// Command jadpo is the toolchain's command line: it wires the front end, the
// checker, the plan writer and the runtime together, and does nothing else.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
