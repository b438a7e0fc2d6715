// Package sqlcommon holds what the store's two SQL adapters share: the tables and their
// columns, the statement registry and its start-up check, and the small rules both apply
// the same way (times, subscribers, text a parked row can hold, ids of operators).
package sqlcommon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jadpo/jadpo/runtime/store"
)

// The tables of the store.
const (
	TableMigrations = "jadpo_schema_migrations"
	TableReceived   = "jadpo_received_events"
	TableOutbox     = "jadpo_outbox"
	TableDeliveries = "jadpo_deliveries"
	TableParked     = "jadpo_parked_messages"
	TableAttempts   = "jadpo_delivery_attempts"
	TableRuns       = "jadpo_housekeeping_runs"
)

// Columns are the columns each table must have for the statements of this build; a
// database may have more.
var Columns = map[string][]string{
	TableMigrations: {"version", "name", "applied_at"},
	TableReceived:   {"source", "received_id", "received_at"},
	TableOutbox:     {"id", "source", "event_name", "event_json", "received_id", "created_at", "headers"},
	TableDeliveries: {
		"id", "outbox_id", "subscriber", "state", "attempts", "max_attempts", "next_attempt_at",
		"lease_expires_at", "fencing_token", "last_error_code", "created_at", "updated_at",
		"settled_at", "dismissed_at", "handler_started", "last_error",
	},
	TableParked: {
		"id", "source", "wire_type", "event_name", "reason", "problems", "body", "body_sha256",
		"state", "created_at", "updated_at", "dismissed_at",
	},
	TableAttempts: {"id", "delivery_id", "attempt", "at", "outcome", "error_code", "error"},
	TableRuns:     {"id", "at", "received_ids", "parked_messages", "deliveries", "outbox", "more"},
}

// TableOrder is the tables in a stable order, for checks and messages.
var TableOrder = []string{TableMigrations, TableReceived, TableOutbox, TableDeliveries, TableParked, TableAttempts, TableRuns}

// Statement is one statement the store runs, named for errors.
type Statement struct {
	// Name is how errors name it: "claim deliveries".
	Name string
	// Tables are the tables it touches, the main one first.
	Tables []string
	SQL    string
}

// Migration is one versioned schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// CheckColumns compares the columns the database has (table -> columns; a table absent
// from have is missing) with Columns, and returns a *store.SchemaError naming the first
// table at fault and a statement that uses the missing column, or nil.
func CheckColumns(have map[string][]string, stmts []Statement) error {
	for _, table := range TableOrder {
		cols, ok := have[table]
		if !ok || len(cols) == 0 {
			st := firstUsing(stmts, table, "")
			return &store.SchemaError{Table: table, Statement: st, Err: fmt.Errorf("table %s does not exist", table)}
		}
		got := make(map[string]bool, len(cols))
		for _, c := range cols {
			got[strings.ToLower(c)] = true
		}
		for _, c := range Columns[table] {
			if !got[c] {
				return &store.SchemaError{Table: table, Column: c, Statement: firstUsing(stmts, table, c)}
			}
		}
	}
	return nil
}

// firstUsing returns the name of the first statement on table whose text uses column
// (any statement on table when column is ""), or "(none)".
func firstUsing(stmts []Statement, table, column string) string {
	var word *regexp.Regexp
	if column != "" {
		word = regexp.MustCompile(`\b` + regexp.QuoteMeta(column) + `\b`)
	}
	for _, s := range stmts {
		on := false
		for _, t := range s.Tables {
			if t == table {
				on = true
				break
			}
		}
		if on && (word == nil || word.MatchString(s.SQL)) {
			return s.Name
		}
	}
	return "(none)"
}

// SchemaMismatch wraps a statement's failure to prepare as a *store.SchemaError naming
// the statement and its tables.
func SchemaMismatch(s Statement, err error) error {
	return &store.SchemaError{Table: strings.Join(s.Tables, ", "), Statement: s.Name, Err: err}
}

// Micro returns t in UTC, truncated to the microsecond: the precision both databases keep.
func Micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Subscribers returns names without repeats, in their first order.
func Subscribers(names []string) []string {
	if len(names) < 2 {
		return names
	}
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// StorableText returns s as text both databases hold: invalid UTF-8 and NUL characters
// become U+FFFD. Parking must never be refused for the text it was given (the body, kept
// byte for byte, holds the original).
func StorableText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// BodySHA256 is the hex sha256 of body, as jadpo_parked_messages.body_sha256 holds it.
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// ProblemsJSON encodes problems as the JSON list the problems column holds, their text
// made storable; never null.
func ProblemsJSON(ps []store.Problem) []byte {
	clean := make([]store.Problem, len(ps))
	for i, p := range ps {
		clean[i] = store.Problem{Field: StorableText(p.Field), Rule: StorableText(p.Rule)}
	}
	b, err := json.Marshal(clean)
	if err != nil { // a slice of two-string structs always encodes
		panic(err)
	}
	return b
}

// ParseProblems decodes the problems column.
func ParseProblems(b []byte) ([]store.Problem, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var ps []store.Problem
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("problems column: %w", err)
	}
	if len(ps) == 0 {
		return nil, nil
	}
	return ps, nil
}

// HeadersJSON encodes a message's header values as the JSON object the outbox's headers
// column holds (keys sorted, as encoding/json writes a map), and false (NULL) when there
// are none. Invalid UTF-8 becomes U+FFFD and a NUL character is escaped, so both databases
// hold any header value.
func HeadersJSON(h map[string]string) (string, bool) {
	if len(h) == 0 {
		return "", false
	}
	b, err := json.Marshal(h)
	if err != nil { // a map of strings always encodes
		panic(err)
	}
	return string(b), true
}

// ParseHeaders decodes the outbox's headers column (valid false: NULL); none is nil.
func ParseHeaders(s string, valid bool) (map[string]string, error) {
	if !valid || s == "" {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, fmt.Errorf("headers column: %w", err)
	}
	if len(h) == 0 {
		return nil, nil
	}
	return h, nil
}

// CheckParked validates a Parked before it is written.
func CheckParked(p store.Parked) error {
	if !p.Reason.Valid() {
		return fmt.Errorf("store: park: unknown reason %q", p.Reason)
	}
	if p.Source == "" {
		return fmt.Errorf("store: park: no source")
	}
	return nil
}

// CheckSettlement validates a Settlement before it is written.
func CheckSettlement(s store.Settlement) error {
	if s.Outcome.State() == "" {
		return fmt.Errorf("store: settle delivery d%d: unknown outcome %d", s.ID, s.Outcome)
	}
	if s.RetryAfter < 0 {
		return fmt.Errorf("store: settle delivery d%d: a negative retry delay (%v)", s.ID, s.RetryAfter)
	}
	return nil
}

// RetryAfterMicros is the delay after the store's now at which a settlement makes the
// delivery due, in microseconds, false when it writes none (the row keeps its own time):
// a retry's own delay, and 0 for a released claim, so that it is due at once.
func RetryAfterMicros(s store.Settlement) (int64, bool) {
	switch s.Outcome {
	case store.SettleRetryWait:
		return s.RetryAfter.Microseconds(), true
	case store.SettleReleased:
		return 0, true
	}
	return 0, false
}

// CheckLease validates the lease of a claim.
func CheckLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("store: claim deliveries: the lease must be positive, not %v", lease)
	}
	return nil
}

// SplitIDs splits operator ids into delivery and parked row ids, each without repeats and
// in their first order; an id of no known kind is returned in bad.
func SplitIDs(ids []store.ID) (deliveries, parked []int64, bad []store.ID) {
	seen := make(map[store.ID]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		switch id.Kind {
		case store.KindDelivery:
			deliveries = append(deliveries, id.N)
		case store.KindParked:
			parked = append(parked, id.N)
		default:
			bad = append(bad, id)
		}
	}
	return deliveries, parked, bad
}

// Refusals returns, in the order of ids, each id whose state (from states; absent means
// unknown) is not want.
func Refusals(ids []store.ID, states map[store.ID]string, want string) []store.Refusal {
	var out []store.Refusal
	seen := make(map[store.ID]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		st, ok := states[id]
		if !ok {
			out = append(out, store.Refusal{ID: id, State: store.StateUnknown})
		} else if st != want {
			out = append(out, store.Refusal{ID: id, State: st})
		}
	}
	return out
}

// ListStates returns the delivery and parked states that filter f lists.
func ListStates(f store.Filter) (deliveries, parked []string, err error) {
	switch f.State {
	case "", store.ListFailed:
		return []string{"failed"}, []string{"failed"}, nil
	case store.ListPending:
		return []string{"pending", "running", "retry_wait"}, []string{"pending"}, nil
	case store.ListDismissed:
		return []string{"dismissed"}, []string{"dismissed"}, nil
	case store.ListSucceeded:
		return []string{"succeeded"}, []string{}, nil
	case store.ListAll:
		return []string{"failed", "pending", "running", "retry_wait", "succeeded", "dismissed"}, []string{"failed", "pending", "dismissed"}, nil
	}
	return nil, nil, fmt.Errorf("store: list: unknown state %q (failed, pending, dismissed, succeeded, all)", f.State)
}

// ListStateOfDelivery is the listing state of a delivery's row state.
func ListStateOfDelivery(state string) store.ListState {
	switch state {
	case "failed":
		return store.ListFailed
	case "dismissed":
		return store.ListDismissed
	case "succeeded":
		return store.ListSucceeded
	}
	return store.ListPending
}

// ErrorText is the error text a settlement keeps: none for a success, at most
// store.MaxErrorText bytes (cut at a character's start), valid UTF-8.
func ErrorText(st store.Settlement) string {
	if st.Outcome == store.SettleSucceeded || st.Error == "" {
		return ""
	}
	s := strings.ToValidUTF8(st.Error, "\uFFFD")
	if len(s) > store.MaxErrorText {
		cut := store.MaxErrorText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// MergeEntries merges the entries of both tables oldest first (then deliveries before
// parked messages, then by id), and applies limit (0: none).
func MergeEntries(a, b []store.Entry, limit int) []store.Entry {
	out := append(append(make([]store.Entry, 0, len(a)+len(b)), a...), b...)
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if !x.CreatedAt.Equal(y.CreatedAt) {
			return x.CreatedAt.Before(y.CreatedAt)
		}
		if x.ID.Kind != y.ID.Kind {
			return x.ID.Kind < y.ID.Kind
		}
		return x.ID.N < y.ID.N
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// RenderSchema writes a dialect's whole schema as one SQL text: the migrations table, each
// migration and the rows that record them, so that applying it by hand leaves a database
// the store accepts as migrated.
func RenderSchema(dialect, migrationsTable string, migrations []Migration, record func(Migration) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- The jadpo events' store, %s schema.\n", dialect)
	b.WriteString("-- Generated by jadpo from runtime/store; the store applies it itself as versioned\n")
	b.WriteString("-- migrations at start-up (docs/design/store.md). Do not edit.\n\n")
	b.WriteString(strings.TrimSpace(migrationsTable))
	b.WriteString("\n")
	for _, m := range migrations {
		fmt.Fprintf(&b, "\n-- Migration %d: %s\n\n", m.Version, m.Name)
		b.WriteString(strings.TrimSpace(m.SQL))
		b.WriteString("\n\n")
		b.WriteString(record(m))
		b.WriteString("\n")
	}
	return b.String()
}

// LatestVersion is the highest version of migrations.
func LatestVersion(migrations []Migration) int {
	v := 0
	for _, m := range migrations {
		if m.Version > v {
			v = m.Version
		}
	}
	return v
}

// Pending lists the migrations a database with the applied versions lacks,
// in order, or the TooNew error when it was migrated by a newer build.
func Pending(migrations []Migration, applied []int) ([]Migration, error) {
	have := map[int]bool{}
	maxHave := 0
	for _, v := range applied {
		have[v] = true
		maxHave = max(maxHave, v)
	}
	if latest := LatestVersion(migrations); maxHave > latest {
		return nil, TooNew(maxHave, latest)
	}
	var out []Migration
	for _, m := range migrations {
		if !have[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Behind is the error of opening a store without migrating it (store.OpenExisting) when
// the database lacks some of migrations, or is newer than this build; nil when it is at
// this build's version.
func Behind(migrations []Migration, applied []int) error {
	pending, err := Pending(migrations, applied)
	if err != nil || len(pending) == 0 {
		return err
	}
	have := 0
	for _, v := range applied {
		have = max(have, v)
	}
	return &store.Error{Op: "open", Class: store.ClassOther,
		Err: fmt.Errorf("the store's schema is at version %d, older than this build of jadpo's (%d): `jadpo tick` migrates it", have, LatestVersion(migrations))}
}

// TooNew is the error for a database migrated by a newer build.
func TooNew(have, latest int) error {
	return &store.Error{Op: "migrate", Class: store.ClassOther,
		Err: fmt.Errorf("the database's schema is at version %d, newer than this build of jadpo knows (%d): run a newer jadpo", have, latest)}
}

// CheckSettleAndClaim checks SettleAndClaim's arguments, as both adapters take
// them: the lease when a claim is asked for (limit > 0), then each settlement.
func CheckSettleAndClaim(sts []store.Settlement, limit int, lease time.Duration) error {
	if limit > 0 {
		if err := CheckLease(lease); err != nil {
			return err
		}
	}
	for _, st := range sts {
		if err := CheckSettlement(st); err != nil {
			return err
		}
	}
	return nil
}
