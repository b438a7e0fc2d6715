package processtest

import (
	"os"
	"strconv"
	"testing"

	"github.com/jadpo/jadpo/internal/jadpoproc"
)

func TestMain(m *testing.M) { jadpoproc.Main(m) }

// jadpoBin builds cmd/jadpo once for the whole run and returns its path.
func jadpoBin(t *testing.T) string { t.Helper(); return jadpoproc.Binary(t) }

// seed is JADPO_FAULT_SEED, or def.
func seed(t *testing.T, def uint64) uint64 {
	if s := os.Getenv("JADPO_FAULT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("JADPO_FAULT_SEED=%q is not a whole number", s)
		}
		return v
	}
	return def
}
