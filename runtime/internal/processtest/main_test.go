package processtest

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jadpo-processtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// jadpoBin builds cmd/jadpo once for the whole run and returns its path.
func jadpoBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() { binPath, binError = buildJadpo(reporoot.Dir(t), binDir) })
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

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
