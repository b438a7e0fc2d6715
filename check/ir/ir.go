// Package ir is the typed intermediate representation the checker produces:
// everything the runtime needs to receive an app's queues and run its
// subscribers, and nothing it does not. It is plain data, written by
// `jadpo build` as build/plan.json and read back by the runtime, which never
// sees source.
//
// Slices are sorted by name and maps marshal with sorted keys, so the same
// sources always give byte-identical JSON. No config value is ever held here:
// a value that comes from config is a reference to the config field.
package ir

import "encoding/json"

// Version is the plan format's version; the runtime refuses another.
const Version = 1

// Program is a checked app.
type Program struct {
	Version     int           `json:"version"`
	Store       *Store        `json:"store,omitempty"`
	Config      []ConfigField `json:"config"`
	Records     []Record      `json:"records"`
	Connections []Connection  `json:"connections"`
	Queues      []Queue       `json:"queues"`
	Subscribers []Subscriber  `json:"subscribers"`
}

// Store is where events are kept. Database is nil for the default: the
// DATABASE_URL environment variable, else an embedded SQLite file.
type Store struct {
	Name     string `json:"name"`
	Database *Value `json:"database,omitempty"`
	// Retention is how long housekeeping keeps settled rows; the checker
	// fills in the defaults.
	Retention Retention `json:"retention"`
}

// Retention is a store's `retention { succeeded: 1d outbox: 1d }`: how long
// a succeeded delivery is kept after it succeeded, and an outbox row after
// its last delivery settled. 0 (a plan written before) means the defaults.
type Retention struct {
	SucceededMS int64 `json:"succeeded_ms"`
	OutboxMS    int64 `json:"outbox_ms"`
}

// ConfigField is one value read from the environment at start-up.
type ConfigField struct {
	Name    string `json:"name"`
	Binding string `json:"binding"`
	Type    Type   `json:"type"`
	Secret  bool   `json:"secret,omitempty"`
	// Default is the declared default as JSON; nil when the value is required.
	Default json.RawMessage `json:"default,omitempty"`
}

// Kind is a type's base.
type Kind string

const (
	Text     Kind = "text"
	Int      Kind = "int"
	Decimal  Kind = "decimal"
	Bool     Kind = "bool"
	Uuid     Kind = "uuid"
	Instant  Kind = "instant"
	Email    Kind = "email"
	Url      Kind = "url"
	Duration Kind = "duration"
	Enum     Kind = "enum"
	RecordK  Kind = "record"
	List     Kind = "list"
	Map      Kind = "map"
)

// Type is a field's or setting's type, with every rule of its refinements.
type Type struct {
	Kind     Kind   `json:"kind"`
	Optional bool   `json:"optional,omitempty"`
	Rules    *Rules `json:"rules,omitempty"`
	// Name is the declared type, enum or record the type came from
	// (a record's ID for kind record).
	Name     string   `json:"name,omitempty"`
	Variants []string `json:"variants,omitempty"`
	Elem     *Type    `json:"elem,omitempty"`
}

// Rules are a type's constraints, the tightest of its refinement chain.
// Bounds are decimal text so that Int and Decimal keep their exact values.
type Rules struct {
	Min       *string  `json:"min,omitempty"`
	Max       *string  `json:"max,omitempty"`
	MinLength *int     `json:"min_length,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Patterns  []string `json:"patterns,omitempty"` // RE2; each must match the whole text
	Format    string   `json:"format,omitempty"`   // "email"
}

// Record is a value or an event: a closed set of fields.
type Record struct {
	// ID is unique in the program: the module path and name
	// (stock/events.OrderShipped), or the package and name (Billing.InvoicePaid).
	ID string `json:"id"`
	// Name is how code and operators name it: OrderShipped, Billing.InvoicePaid.
	Name   string  `json:"name"`
	Event  bool    `json:"event,omitempty"`
	Fields []Field `json:"fields"`
}

// Field is one member of a record.
type Field struct {
	Name string `json:"name"`
	// WireName is the member name on a provider's wire when the field gives one.
	WireName string `json:"wire_name,omitempty"`
	Type     Type   `json:"type"`
}

// Value is what a setting, credential member, host or mapping input is
// given: exactly one field is set.
type Value struct {
	Config  string          `json:"config,omitempty"`  // config.<field>
	Setting string          `json:"setting,omitempty"` // settings.<name>, in a mapping
	Message string          `json:"message,omitempty"` // message.<member>: handle, to, subject, ...
	Literal json.RawMessage `json:"literal,omitempty"` // text, whole number, decimal or flag as JSON
}

// Connection is a configured use of an installed package.
type Connection struct {
	Name     string   `json:"name"`
	Package  string   `json:"package"`
	Provider Provider `json:"provider"`
	// Host is the connection's host, or nil when the package's fixed host is used.
	Host       *Value           `json:"host,omitempty"`
	Credential map[string]Value `json:"credential,omitempty"`
	// Settings holds a value for every setting the package declares and the
	// connection gives or defaults.
	Settings map[string]Value `json:"settings"`
	// Operations are the package's operations this app calls, by resource.operation.
	Operations []Operation `json:"operations"`
	Receiving  *Receiving  `json:"receiving,omitempty"`
	Email      *Call       `json:"email,omitempty"`
}

// Provider is how a package talks to its service.
type Provider struct {
	Protocol   Protocol         `json:"protocol"`
	Credential CredentialScheme `json:"credential,omitempty"` // "" for none
	AWSService string           `json:"aws_service,omitempty"`
	AWSTarget  string           `json:"aws_target,omitempty"`
	ErrorCode  string           `json:"error_code,omitempty"`
	Host       string           `json:"host,omitempty"` // a fixed host
}

// Operation is one call the app makes.
type Operation struct {
	Ref       string `json:"ref"` // resource.operation
	Resource  string `json:"resource"`
	Name      string `json:"name"`
	Input     *Type  `json:"input,omitempty"`
	Output    *Type  `json:"output,omitempty"`
	RetrySafe bool   `json:"retry_safe,omitempty"`
	Method    string `json:"method,omitempty"`
	Path      string `json:"path,omitempty"`
}

// Receiving is how messages are fetched and acknowledged on a connection:
// a mapping onto two operations, or a driver built into the toolchain.
type Receiving struct {
	Driver      Driver `json:"driver,omitempty"` // DriverMapping ("") for the package's own mapping
	Receive     *Call  `json:"receive,omitempty"`
	Messages    string `json:"messages,omitempty"` // the response field holding the list
	Body        string `json:"body,omitempty"`     // the item field holding the body
	Handle      string `json:"handle,omitempty"`   // the item field holding the handle
	Acknowledge *Call  `json:"acknowledge,omitempty"`
	// AcknowledgeBatch, when the package maps one, acknowledges a batch's
	// settled messages in one call; Acknowledge stays the fallback.
	AcknowledgeBatch *BatchCall `json:"acknowledge_batch,omitempty"`
}

// BatchCall is a call that acknowledges many messages at once: Call's
// inputs, plus the list input Entries built with one Entry per message, and
// the answer's list Failed of the entries that did not take, each named by
// its FailedID field (and, when mapped, its list Succeeded of those that did).
type BatchCall struct {
	Call
	Entries  string           `json:"entries"`   // the input field holding the list
	Entry    map[string]Value `json:"entry"`     // each entry's fields: message.entry_id, message.handle, settings, literals
	Failed   string           `json:"failed"`    // the output field listing the failed entries
	FailedID string           `json:"failed_id"` // the field of a failed entry holding its entry id
	// Succeeded, when the package maps it, is the output field listing the
	// entries that took, each named by its SucceededID field. With it the
	// answer is read strictly: an entry it names neither way is not taken
	// as acknowledged (it is acknowledged again on its own).
	Succeeded   string `json:"succeeded,omitempty"`
	SucceededID string `json:"succeeded_id,omitempty"`
}

// Call is an operation with its mapped inputs.
type Call struct {
	Operation string           `json:"operation"` // resource.operation
	Input     map[string]Value `json:"input"`
}

// Queue is a queue the app receives.
type Queue struct {
	Name       string `json:"name"`
	Connection string `json:"connection"`
	// Source is how ids are recorded and operators see it: "queue <name>".
	Source string   `json:"source"`
	IDAt   []string `json:"id_at"`
	// TypeAt is nil for a queue of one kind.
	TypeAt []string     `json:"type_at,omitempty"`
	Events []QueueEvent `json:"events"`
}

// QueueEvent is one event a queue lists.
type QueueEvent struct {
	Event    string `json:"event"` // record ID
	Name     string `json:"name"`  // as operators see it
	WireName string `json:"wire_name,omitempty"`
}

// Subscriber runs handlers for each delivery of the events it is on.
type Subscriber struct {
	Name     string    `json:"name"`
	Retry    Retry     `json:"retry"`
	Handlers []Handler `json:"handlers"`
}

// Retry is a subscriber's retry budget: doubling from FirstDelay up to
// MaxDelay, with full jitter.
type Retry struct {
	MaxAttempts  int   `json:"max_attempts"`
	FirstDelayMS int64 `json:"first_delay_ms"`
	MaxDelayMS   int64 `json:"max_delay_ms"`
}

// Handler runs once per delivery of Event.
type Handler struct {
	Event   string `json:"event"` // record ID
	Name    string `json:"name"`  // the event as operators see it
	Binding string `json:"binding"`
	Steps   []Step `json:"steps"`
}

// Step is one `attempt`: a call to a connection's operation, or `send` through
// its email mapping.
type Step struct {
	Connection string          `json:"connection"`
	Operation  string          `json:"operation"` // resource.operation, or "send"
	Args       map[string]Expr `json:"args"`
}

// Expr is a handler's argument value: exactly one field is set.
type Expr struct {
	Literal json.RawMessage `json:"literal,omitempty"`
	// Event is the handler's binding: the event itself.
	Event bool `json:"event,omitempty"`
	// Path reads a field of the event: ["order_id"], ["lines", "0", "sku"].
	Path   []string        `json:"path,omitempty"`
	Config string          `json:"config,omitempty"`
	Record map[string]Expr `json:"record,omitempty"`
	List   []Expr          `json:"list,omitempty"`
	// JSON is json(binding): the event as JSON text.
	JSON bool `json:"json,omitempty"`
}

// RecordByID finds a record.
func (p *Program) RecordByID(id string) *Record {
	for i := range p.Records {
		if p.Records[i].ID == id {
			return &p.Records[i]
		}
	}
	return nil
}

// ConnectionByName finds a connection.
func (p *Program) ConnectionByName(name string) *Connection {
	for i := range p.Connections {
		if p.Connections[i].Name == name {
			return &p.Connections[i]
		}
	}
	return nil
}

// SubscribersByEvent maps each event's name (as operators see it) to the
// subscribers with a handler for it, in the plan's order: a kept event
// gets one delivery per subscriber listed.
func (p *Program) SubscribersByEvent() map[string][]string {
	out := map[string][]string{}
	for _, s := range p.Subscribers {
		for _, h := range s.Handlers {
			out[h.Name] = append(out[h.Name], s.Name)
		}
	}
	return out
}

// Budget is a delivery's attempt budget: the one the store holds for it,
// or, when that is 0 (the delivery was written to take its subscriber's),
// the plan's MaxAttempts.
func (r Retry) Budget(stored int) int {
	if stored > 0 {
		return stored
	}
	return r.MaxAttempts
}
