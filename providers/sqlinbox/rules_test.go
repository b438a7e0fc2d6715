package sqlinbox

import (
	"slices"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

// TestCheckSettingsLeavesOpenSettingsToTheStart: `jadpo check` applies
// the start's rules to the settings it knows, and none that reads a
// setting given a config field (its value comes at start).
func TestCheckSettingsLeavesOpenSettingsToTheStart(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		v := map[string]any{"table": "order_jobs", "id": "job_id", "headers": "tenant", "columns": "note", "claim": "row_lock", "lease": "30s"}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	cases := []struct {
		name   string
		values map[string]any
		open   []string
		want   []string // the settings the problems are shown at
	}{
		{"lease without locked_until", base(map[string]any{"claim": "lease"}), nil, []string{"claim"}},
		{"lease, locked_until from config", base(map[string]any{"claim": "lease"}), []string{"locked_until"}, nil},
		{"claim from config", base(map[string]any{"locked_until": "lu", "lock_key": "tenant"}), []string{"claim"}, nil},
		{"lock_key and locked_until outside their forms", base(map[string]any{"locked_until": "lu", "lock_key": "tenant"}), nil,
			[]string{"lock_key", "locked_until"}},
		{"a column twice", base(map[string]any{"columns": "note, tenant"}), nil, []string{"columns"}},
		{"the table from config", base(map[string]any{"table": nil}), []string{"table"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ir.ConnectionSettings{Values: map[string]any{}, Open: map[string]bool{}}
			for k, v := range c.values {
				if v != nil {
					s.Values[k] = v
				}
			}
			for _, k := range c.open {
				s.Open[k] = true
				delete(s.Values, k)
			}
			var got []string
			for _, p := range checkSettings(s) {
				if p.Message == "" || p.Help == "" {
					t.Errorf("problem without a message or a help: %+v", p)
				}
				got = append(got, p.Setting)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("problems at %v, want %v", got, c.want)
			}
		})
	}
}

// TestBodyMembers: the members every body holds are the default fetch's
// columns, unknown when a fetch of the app's own or a config field names
// them.
func TestBodyMembers(t *testing.T) {
	values := map[string]any{"table": "order_jobs", "id": "job_id", "group": "name", "attempt": "attempt", "headers": "tenant, trace", "columns": "note"}
	b, ok := bodyMembers(ir.ConnectionSettings{Values: values})
	if !ok || !slices.Equal(b.Members, []string{"job_id", "name", "attempt", "tenant", "trace", "note"}) || b.Setting != "columns" {
		t.Fatalf("%+v %v", b, ok)
	}
	if _, ok := bodyMembers(ir.ConnectionSettings{Values: values, Open: map[string]bool{"headers": true}}); ok {
		t.Fatal("headers from config: the members are known")
	}
	withFetch := map[string]any{"fetch": "SELECT job_id FROM order_jobs WHERE job_id = ANY($1)"}
	for k, v := range values {
		withFetch[k] = v
	}
	if _, ok := bodyMembers(ir.ConnectionSettings{Values: withFetch}); ok {
		t.Fatal("a custom fetch: the members are known")
	}
}
