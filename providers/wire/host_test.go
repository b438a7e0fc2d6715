package wire

import "testing"

func TestLookup(t *testing.T) {
	v := map[string]any{
		"__type": "t",
		"a.b":    "whole",
		"error":  map[string]any{"code": "E1"},
		"errors": []any{map[string]any{"code": "E2"}},
	}
	cases := map[string]any{"__type": "t", "a.b": "whole", "error.code": "E1", "errors.0.code": "E2"}
	for path, want := range cases {
		if got, ok := Lookup(v, path); !ok || got != want {
			t.Errorf("Lookup(%q) = %v, %v", path, got, ok)
		}
	}
	for _, path := range []string{"", "nope", "error.nope", "errors.1.code", "errors.x", "__type.x"} {
		if got, ok := Lookup(v, path); ok {
			t.Errorf("Lookup(%q) = %v", path, got)
		}
	}
}
