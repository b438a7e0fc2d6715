// Command jadpo is the toolchain's command line: it wires the front end, the
// checker, the plan writer and the runtime together, and does nothing else.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Signals are caught from the first moment, so a SIGTERM that arrives
	// while `jadpo run` is still starting ends it cleanly too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := runContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
