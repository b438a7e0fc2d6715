package ir

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestCredentialSchemes(t *testing.T) {
	for _, s := range CredentialSchemes {
		if !s.Known() || len(s.Members()) == 0 {
			t.Errorf("%s: known %v, members %v", s, s.Known(), s.Members())
		}
		for _, m := range s.Members() {
			if s != CredentialAWSSigV4 && !m.Secret {
				t.Errorf("%s's %s is not secret", s, m.Name)
			}
		}
	}
	if !CredentialScheme("").Known() || CredentialScheme("oauth").Known() || CredentialScheme("oauth").Members() != nil {
		t.Fatal("none is known, an unknown scheme is not, and has no members")
	}
	if got := CredentialAWSSigV4.Members(); !slices.Equal(got, []CredentialMember{{"key_id", false, true}, {"secret", true, true}, {"session_token", true, false}}) {
		t.Fatalf("aws_sigv4's members %v", got)
	}
}

func TestRetryBudget(t *testing.T) {
	r := Retry{MaxAttempts: 5}
	if r.Budget(0) != 5 || r.Budget(3) != 3 || r.Budget(-1) != 5 || (Retry{}).Budget(0) != 0 {
		t.Fatal("a budget of 0 in the store means the plan's; another is the store's")
	}
}

func TestSubscribersByEvent(t *testing.T) {
	p := &Program{Subscribers: []Subscriber{
		{Name: "pack_order", Handlers: []Handler{{Name: "OrderShipped"}, {Name: "ReturnRequested"}}},
		{Name: "audit", Handlers: []Handler{{Name: "OrderShipped"}}},
	}}
	got := p.SubscribersByEvent()
	if !slices.Equal(got["OrderShipped"], []string{"pack_order", "audit"}) || !slices.Equal(got["ReturnRequested"], []string{"pack_order"}) || len(got) != 2 {
		t.Fatalf("subscribers %v", got)
	}
}

func TestDecodeLiteral(t *testing.T) {
	for raw, want := range map[string]any{`10`: int64(10), `1.5`: json.Number("1.5"), `1e400`: json.Number("1e400"), `"x"`: "x", `true`: true} {
		if got, err := DecodeLiteral(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("%s: %#v, %v", raw, got, err)
		}
	}
	if _, err := DecodeLiteral(json.RawMessage(`{`)); err == nil {
		t.Fatal("an invalid literal is refused")
	}
}
