package redisstreams_test

import (
	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/catalog"
)

// The example app is checked against the toolchain's catalogue and
// drivers, handed to checktest as cmd/jadpo hands them to the checker.
func init() { checktest.Wire(catalog.Builtin, check.Drivers(providers.Contracts())) }
