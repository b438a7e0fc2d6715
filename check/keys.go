package check

import (
	"strings"

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
// "email send"; and
// "credential <scheme>" for a connection's credential. Nil for another.
func MemberKeys(block string) []string {
	if scheme, ok := strings.CutPrefix(block, "credential "); ok {
		var out []string
		for _, m := range ir.CredentialScheme(scheme).Members() {
			out = append(out, m.Name)
		}
		return out
	}
	return append([]string(nil), blockKeys[block]...)
}
