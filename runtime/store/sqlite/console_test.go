package sqlite_test

import (
	"testing"

	"github.com/jadpo/jadpo/runtime/store/storetest"
)

func TestBrowserConformance(t *testing.T) {
	storetest.RunBrowser(t, storetest.Harness{NewDatabase: newDatabase})
}
