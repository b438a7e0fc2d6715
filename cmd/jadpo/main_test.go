package main

import (
	"testing"

	"github.com/jadpo/jadpo/internal/jadpoproc"
)

// TestMain gives jadpoproc.Binary its folder: the tests that run the built
// binary (signals, the language server on stdio, secrets in its output)
// share one build of cmd/jadpo per run.
func TestMain(m *testing.M) { jadpoproc.Main(m) }
