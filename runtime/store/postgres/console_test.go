package postgres_test

import (
	"testing"

	"github.com/jadpo/jadpo/runtime/store/storetest"
)

func TestBrowserConformance(t *testing.T) {
	adminPool(t)
	storetest.RunBrowser(t, storetest.Harness{NewDatabase: func(t *testing.T) storetest.Database { return newDatabase(t) }})
}
