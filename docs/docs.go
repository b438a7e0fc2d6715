// Package docs holds the user's pages that the toolchain carries in its binary:
// the diagnostics' pages, which `jadpo explain CODE` prints.
package docs

import "embed"

// Diagnostics holds diagnostics/<code>.md, one page per diagnostic code.
//
//go:embed diagnostics/*.md
var Diagnostics embed.FS
