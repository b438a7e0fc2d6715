package sqlinbox

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTableOf(t *testing.T) {
	tb, err := TableOf(map[string]any{"table": "order_jobs", "id": "job_id", "schema": "jobs", "headers": " tenant, trace ,",
		"columns": "order_id", "lock_key": "", "attempt": "attempts"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Name != "order_jobs" || tb.ID != "job_id" || tb.Schema != "jobs" || tb.Attempt != "attempts" || tb.Form != RowLock ||
		!slices.Equal(tb.Headers, []string{"tenant", "trace"}) || !slices.Equal(tb.Columns, []string{"order_id"}) || tb.LockKey != nil || tb.Lease != 0 {
		t.Fatalf("table %+v", tb)
	}
	for claim, want := range map[string]Form{"row_lock": RowLock, "lease": Lease, "advisory_lock": AdvisoryLock} {
		if tb, err := TableOf(map[string]any{"claim": claim, "lease": "2s"}); err != nil || tb.Form != want || tb.Lease != 2*time.Second {
			t.Errorf("claim %s: %+v, %v", claim, tb, err)
		}
	}
	for _, c := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"claim": "optimistic"}, `"optimistic" claim form is not one of row_lock, lease and advisory_lock`},
		{map[string]any{"lease": "0s"}, `setting lease: "0s" holds no row`},
		{map[string]any{"lease": "soon"}, `setting lease: "soon" is not a duration`},
	} {
		if _, err := TableOf(c.settings); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.settings, err, c.want)
		}
	}
}
