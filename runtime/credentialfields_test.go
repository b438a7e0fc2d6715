package runtime

import (
	"slices"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

// TestCredentialFields: a refusal of the credential names the config fields
// it is read from, sorted and once each, and never a literal.
func TestCredentialFields(t *testing.T) {
	lit := ir.Value{Literal: []byte(`"AKIA-literal"`)}
	c := &ir.Connection{Credential: map[string]ir.Value{
		ir.MemberSecret:       {Config: "aws_secret"},
		ir.MemberKeyID:        {Config: "aws_key_id"},
		ir.MemberSessionToken: {Config: "aws_secret"},
		"other":               lit,
	}}
	if got := credentialFields(c); !slices.Equal(got, []string{"aws_key_id", "aws_secret"}) {
		t.Errorf("credentialFields = %q", got)
	}
	if got := credentialFields(&ir.Connection{}); got != nil {
		t.Errorf("no credential: %q", got)
	}
}
