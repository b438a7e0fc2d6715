package check

import (
	"github.com/jadpo/jadpo/check/ir"
)

// blockKeys are the member keys each kind of block takes: the checker
// reads its lists here (c.members), and editors offer them as completions
// (MemberKeys), so the two cannot drift apart.
var blockKeys = map[string][]string{
	"connection":                  {"package", "host", "credential", "settings"},
	"queue":                       {"id_at", "type_at", "events"},
	"queue event":                 {"wire_name"},
	"store":                       {"database", "retention"},
	"store retention":             {"succeeded", "outbox"},
	"subscriber retry":            {"max_attempts", "first_delay", "max_delay"},
	"config field":                append([]string{"binding", "secret", "default"}, ruleKeys...),
	"type rules":                  ruleKeys,
	"field rules":                 append(append([]string{}, ruleKeys...), "wire_name"),
	"setting rules":               append(append([]string{}, ruleKeys...), "default"),
	"provider":                    {"protocol", "credential", "aws", "error_code", "host"},
	"provider aws":                {"service", "target"},
	"operation":                   {"input", "output", "retry_safe", "decode", "method", "path"},
	"provide receiving":           {"receive", "acknowledge", "acknowledge_batch", "driver"},
	"receiving receive":           {"call", "input", "messages", "body", "handle"},
	"receiving acknowledge":       {"call", "input"},
	"receiving acknowledge_batch": {"call", "input", "entries", "entry", "failed", "failed_id", "succeeded", "succeeded_id"},
	"provide email":               {"send"},
	"email send":                  {"call", "input"},
}

// MemberKeys lists the keys a block takes, by its kind: "connection",
// "queue", "queue event", "store", "store retention", "subscriber retry",
// "config field", "type rules", "field rules", "setting rules", "provider",
// "provider aws", "operation", "provide receiving", "receiving receive",
// "receiving acknowledge", "receiving acknowledge_batch", "provide email",
// "email send". Nil for another. A connection's credential takes its
// scheme's members: Drivers.CredentialKeys.
func MemberKeys(block string) []string {
	return append([]string(nil), blockKeys[block]...)
}

// CredentialKeys lists the members a connection's credential of scheme
// takes, in the order they are written: a built-in scheme's, or the one a
// driver of ds brings (ds: the contracts handed to the checker,
// project.Project.Drivers), so that an editor offers what the checker
// takes. Nil for a scheme neither knows.
func (ds Drivers) CredentialKeys(scheme ir.CredentialScheme) []string {
	var out []string
	for _, m := range ds.SchemeMembers(scheme) {
		out = append(out, m.Name)
	}
	return out
}

// SchemeMembers are the credential members scheme takes: a built-in
// scheme's, or the one a driver of ds brings; nil for neither.
func (ds Drivers) SchemeMembers(scheme ir.CredentialScheme) []ir.CredentialMember {
	if ms := scheme.Members(); ms != nil {
		return ms
	}
	for _, d := range ds {
		for _, s := range d.Schemes {
			if s.Name == scheme {
				return s.Members
			}
		}
	}
	return nil
}
