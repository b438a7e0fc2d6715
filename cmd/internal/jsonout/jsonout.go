// Package jsonout holds the types of every JSON document the CLI prints with
// --format json (docs/reference/json.md): the envelope, one Go type per kind,
// and Write, the one way such a document reaches standard output.
//
// Each kind's type embeds Envelope, so the four envelope fields come first in
// the object; diagnostic_report is lang/diag's Report, wrapped. Kinds lists
// them all, and this package's tests hold docs/reference/json.md to the types
// field by field. The fields of the kinds that were maps before they were
// types (deliveries, packages) are declared in alphabetical order, which is
// the order a map's keys were printed in: the bytes did not change.
package jsonout

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/jadpo/jadpo/lang/diag"
)

// SchemaVersion is the version of every document's shape (docs/reference/json.md,
// "Compatibility"): adding a field keeps it; removing or changing one is a new version.
const SchemaVersion = 1

// The envelope's status: one spelling in every document, check's report included
// (diag.StatusOK is the same word).
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Envelope is what every JSON document starts with.
type Envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	Command       string `json:"command"`
	Status        string `json:"status"` // StatusOK or StatusFailed
}

// Head is the envelope every kind carries.
func (e Envelope) Head() Envelope { return e }

// NewEnvelope is the envelope of kind, printed by command ("deliveries show"), with status.
func NewEnvelope(kind, command, status string) Envelope {
	return Envelope{SchemaVersion: SchemaVersion, Kind: kind, Command: command, Status: status}
}

// Document is a JSON document of one of Kinds.
type Document interface {
	Head() Envelope
}

// Kind is one kind of document: its name (the envelope's kind), its Go type and the
// commands that print it (nil: any command).
type Kind struct {
	Name      string
	Type      reflect.Type
	PrintedBy []string
}

// Kinds is every kind of document, in the order docs/reference/json.md lists them.
var Kinds = []Kind{
	{"diagnostic_report", reflect.TypeFor[DiagnosticReport](), []string{"check", "build"}},
	{"delivery_list", reflect.TypeFor[DeliveryList](), []string{"deliveries", "deliveries list"}},
	{"delivery_entry", reflect.TypeFor[DeliveryEntry](), []string{"deliveries show"}},
	{"delivery_change", reflect.TypeFor[DeliveryChange](), []string{"deliveries retry", "deliveries dismiss"}},
	{"store_stats", reflect.TypeFor[StoreStats](), []string{"store stats"}},
	{"package_list", reflect.TypeFor[PackageList](), []string{"package list"}},
	{"package_catalogue", reflect.TypeFor[PackageCatalogue](), []string{"package list --catalogue"}},
	{"error", reflect.TypeFor[Error](), nil}, // any command but check and build, when it fails
}

// Write prints doc, indented, with a final newline; characters such as < and & are
// written as they are. It refuses a document whose kind is not in Kinds or whose Go type is
// not its kind's.
func Write(w io.Writer, doc Document) error {
	kind := doc.Head().Kind
	for _, k := range Kinds {
		if k.Name != kind {
			continue
		}
		if got := reflect.TypeOf(doc); got != k.Type {
			return fmt.Errorf("jsonout: a %s document is a %s, not a %s", kind, k.Type, got)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doc)
	}
	return fmt.Errorf("jsonout: no kind %q", kind)
}

// DiagnosticReport is check's and build's report: diag.Report, whose first fields are the
// envelope's (a test holds them to Envelope's).
type DiagnosticReport struct {
	diag.Report
}

// Head is the report's envelope.
func (r DiagnosticReport) Head() Envelope {
	return Envelope{SchemaVersion: r.SchemaVersion, Kind: r.Kind, Command: r.Command, Status: r.Status}
}

// DeliveryList is `deliveries` and `deliveries list`.
type DeliveryList struct {
	Envelope
	Entries []Entry `json:"entries"`
	State   string  `json:"state"`
	Store   string  `json:"store"`
}

// DeliveryEntry is `deliveries show`.
type DeliveryEntry struct {
	Envelope
	Entry Entry  `json:"entry"`
	Store string `json:"store"`
}

// DeliveryChange is `deliveries retry` and `deliveries dismiss`.
type DeliveryChange struct {
	Envelope
	Action string   `json:"action"`
	IDs    []string `json:"ids"`
	State  string   `json:"state"`
	Store  string   `json:"store"`
}

// Entry is a delivery (Kind "delivery": Subscriber, Attempts and MaxAttempts set) or a
// parked message (Kind "parked_message": BodySHA256 set); the fields one kind does not have
// are nil and left out.
type Entry struct {
	AttemptLog  *[]Attempt        `json:"attemptLog,omitempty"` // deliveries show only
	Attempts    *int              `json:"attempts,omitempty"`
	Body        *string           `json:"body,omitempty"`       // with --body
	BodyBase64  *string           `json:"bodyBase64,omitempty"` // with --body, for a body that is not UTF-8
	BodySHA256  *string           `json:"bodySha256,omitempty"`
	Code        string            `json:"code"`
	CreatedAt   time.Time         `json:"createdAt"`
	DismissedAt *time.Time        `json:"dismissedAt,omitempty"` // a dismissed one's
	Error       string            `json:"error"`
	Event       string            `json:"event"`
	Headers     map[string]string `json:"headers,omitempty"`
	ID          string            `json:"id"`
	Kind        string            `json:"kind"`
	// LeaseUntil is a running delivery's: when the lease of the process that holds it ends.
	LeaseUntil  *time.Time `json:"leaseUntil,omitempty"`
	MaxAttempts *Budget    `json:"maxAttempts,omitempty"`
	MessageID   string     `json:"messageId"`
	// NextAttemptAt is a pending or retry_wait delivery's: when it is due.
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	Problems      []Problem  `json:"problems"`
	// RowState is the row's own state (a delivery's pending, running or retry_wait is the
	// listing state pending); State is the listing state, what --state selects.
	RowState   string     `json:"rowState"`
	SettledAt  *time.Time `json:"settledAt,omitempty"` // a settled delivery's
	Source     string     `json:"source"`
	State      string     `json:"state"`
	Subscriber *string    `json:"subscriber,omitempty"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	What       string     `json:"what"`
	WireType   string     `json:"wireType"`
}

// Attempt is one settled attempt of a delivery, in `deliveries show`'s entry.
type Attempt struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Code    string    `json:"code"`
	Error   string    `json:"error"`
	Outcome string    `json:"outcome"`
}

// Budget is a delivery's attempt budget: a number, or null (0) when the plan's applies
// and no plan was read.
type Budget int

// MarshalJSON writes 0 as null.
func (b Budget) MarshalJSON() ([]byte, error) {
	if b == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(int(b))
}

// Problem is a reason a message was unreadable: the field and the rule, never a value.
type Problem struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// StoreStats is `store stats`.
type StoreStats struct {
	Envelope
	Store            string   `json:"store"`
	Deliveries       []Count  `json:"deliveries"`
	Parked           []Count  `json:"parkedMessages"`
	OldestPending    *string  `json:"oldestPendingAt"`
	OldestPendingAge *float64 `json:"oldestPendingAgeSeconds"`
	Tables           []Table  `json:"tables"`
}

// Count is a number of deliveries (by Subscriber) or parked messages (by Reason) in a state.
type Count struct {
	Subscriber string `json:"subscriber,omitempty"`
	Reason     string `json:"reason,omitempty"`
	State      string `json:"state"`
	Count      int64  `json:"count"`
}

// Table is a store table's size.
type Table struct {
	Name  string `json:"name"`
	Rows  int64  `json:"rows"`
	Bytes *int64 `json:"bytes,omitempty"` // PostgreSQL only
}

// PackageList is `package list`.
type PackageList struct {
	Envelope
	Packages []Package        `json:"packages"`
	Problems []PackageProblem `json:"problems"`
}

// Package is an installed package.
type Package struct {
	Digest string `json:"digest"`
	Files  int    `json:"files"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// PackageProblem is a file of a package missing, changed or not in the lock.
type PackageProblem struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Package string `json:"package"`
	Path    string `json:"path"`
}

// PackageCatalogue is `package list --catalogue`.
type PackageCatalogue struct {
	Envelope
	Packages []string `json:"packages"`
}

// Error is any command's failure (but check's and build's, which are reports).
type Error struct {
	Envelope
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is what failed: a code (docs/reference/json.md lists them) and the line the
// text output prints.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewError is command's failure.
func NewError(command, code, message string) Error {
	return Error{Envelope: NewEnvelope("error", command, StatusFailed), Error: ErrorDetail{Code: code, Message: message}}
}
