package store

import (
	"slices"
	"time"
)

// Keep is one received message to keep: its id recorded under Source, its event written to
// the outbox and one pending delivery per subscriber.
type Keep struct {
	// Source is where the message came from: "queue warehouse_queue".
	Source string
	// ReceivedID is the message's own id, as read at the queue's id_at.
	ReceivedID string
	// EventName is the event's name: "OrderShipped".
	EventName string
	// EventJSON is the event as canonical JSON; it is stored byte for byte.
	EventJSON []byte
	// Subscribers are the subscribers of the event, one pending delivery each; a name
	// given twice gets one delivery.
	Subscribers []string
	// RetriedParkedID is the id of the parked message this message was re-read from
	// (RetriedParked), or 0. That parked row is deleted in the same savepoint when the
	// message is kept, and when it is a repeat (its id is kept already).
	RetriedParkedID int64
	// Headers are the message's header values (a SQL inbox's header columns: name ->
	// value), kept with the outbox row and shown with each of its deliveries; nil or
	// empty for none. They are not secrets, but they are shown as they are.
	Headers map[string]string
}

// KeepOutcome says what KeepBatch did with one message.
type KeepOutcome uint8

// The outcomes of KeepBatch.
const (
	// Kept: the id was recorded, the outbox row and the deliveries written.
	Kept KeepOutcome = iota + 1
	// Repeat: the id was recorded already; nothing was written (but RetriedParkedID was
	// deleted).
	Repeat
	// Refused: the store refused a statement for this message as it would every time
	// (KeepResult.Err is a refused *Error); its savepoint was rolled back and nothing of it
	// was written. The runtime parks such a message unreadable.
	Refused
)

func (o KeepOutcome) String() string {
	switch o {
	case Kept:
		return "kept"
	case Repeat:
		return "repeat"
	case Refused:
		return "refused"
	}
	return "unknown"
}

// KeepResult is the outcome of one message of KeepBatch, at the same index as its Keep.
type KeepResult struct {
	Outcome KeepOutcome
	// OutboxID is the outbox row written, when Kept.
	OutboxID int64
	// Err is why the store refused the message, when Refused: a *Error of ClassRefused.
	Err error
}

// Reason is why a message was parked.
type Reason string

// The reasons a message is parked.
const (
	ReasonUnlistedType Reason = "unlisted_type"
	ReasonUnreadable   Reason = "unreadable"
	ReasonTooLarge     Reason = "too_large"
)

// Reasons lists every reason, for what must name them all (the Worker's
// JavaScript is held to it by a test).
var Reasons = []Reason{ReasonUnlistedType, ReasonUnreadable, ReasonTooLarge}

// Valid reports whether r is one of the reasons.
func (r Reason) Valid() bool { return slices.Contains(Reasons, r) }

// Problem is one problem of a message that could not be read as its event: the field and
// the rule it broke, never a value.
type Problem struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// Parked is a message to park.
type Parked struct {
	Source string
	// ReceivedID is the message's own id when one was read at the queue's id_at (the
	// producer's id, for tying the parked message to the sender's record), "" when none.
	ReceivedID string
	// WireType is the type read at the queue's type_at, "" when none was read.
	WireType string
	// EventName is the event the message was read as, "" when none.
	EventName string
	Reason    Reason
	Problems  []Problem
	// Body is the message's body, kept byte for byte.
	Body []byte
	// RetriedParkedID, when not 0, is the parked message this one was re-read from and
	// failed again: that row is set back to failed with the new reason and problems
	// instead of a row being added.
	RetriedParkedID int64
}

// ParkResult says what Park did.
type ParkResult uint8

// The outcomes of Park.
const (
	// ParkAdded: a new parked row.
	ParkAdded ParkResult = iota + 1
	// ParkAlready: the same body from the same source is parked already; nothing added.
	ParkAlready
	// ParkFailedAgain: the retried parked row is failed again, with the new reason.
	ParkFailedAgain
	// ParkGone: the retried parked row is no longer pending (another process kept or
	// parked it again, or it was deleted); nothing changed.
	ParkGone
)

func (r ParkResult) String() string {
	switch r {
	case ParkAdded:
		return "added"
	case ParkAlready:
		return "already parked"
	case ParkFailedAgain:
		return "failed again"
	case ParkGone:
		return "gone"
	}
	return "unknown"
}

// ParkedState is the state of a parked message.
type ParkedState string

// The states of a parked message.
const (
	ParkedFailed    ParkedState = "failed"
	ParkedPending   ParkedState = "pending"
	ParkedDismissed ParkedState = "dismissed"
)

// ParkedMessage is a parked message as RetriedParked returns it, to be read again.
type ParkedMessage struct {
	ID     int64
	Source string
	// ReceivedID is the message id read when it was parked, "" when none was read.
	ReceivedID string
	WireType   string
	EventName  string
	Reason     Reason
	Problems   []Problem
	Body       []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// DeliveryState is the state of a delivery.
type DeliveryState string

// The states of a delivery.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryRunning   DeliveryState = "running"
	DeliveryRetryWait DeliveryState = "retry_wait"
	DeliverySucceeded DeliveryState = "succeeded"
	DeliveryFailed    DeliveryState = "failed"
	DeliveryDismissed DeliveryState = "dismissed"
)

// DeliveryStates lists every delivery state.
var DeliveryStates = []DeliveryState{
	DeliveryPending, DeliveryRunning, DeliveryRetryWait, DeliverySucceeded, DeliveryFailed, DeliveryDismissed,
}

// Claimed is a delivery claimed by ClaimDeliveries: the caller holds it until the lease
// expires, and settles it naming Token.
type Claimed struct {
	ID int64
	// Token is the fencing token of this claim.
	Token int64
	// Attempt is this attempt's number, from 1; it was counted at the claim, and is
	// uncounted if the lease ends before the claim's holder writes that its handler
	// started (SettleStarted).
	Attempt int
	// MaxAttempts is the delivery's own attempt budget, 0 when the plan's applies.
	MaxAttempts int
	// LeaseExpiresAt is the lease's end as the store wrote it, on the store's clock: for
	// showing, not for comparing with the process's clock (the delivery engine measures
	// the lease from when it asked for the claim).
	LeaseExpiresAt time.Time
	Subscriber     string
	OutboxID       int64
	Source         string
	ReceivedID     string
	EventName      string
	EventJSON      []byte
}

// SettleOutcome is how a claimed delivery ended.
type SettleOutcome uint8

// The outcomes of a delivery's attempt.
const (
	SettleSucceeded SettleOutcome = iota + 1
	// SettleRetryWait: try again Settlement.RetryAfter after the settlement, on the
	// store's clock.
	SettleRetryWait
	// SettleFailed: given up; the delivery is listed for operators.
	SettleFailed
	// SettleReleased: the claim is handed back with its handler never run
	// (it was claimed ahead of a free worker and waited too long, or the
	// process is stopping): the delivery is pending again, due at once, and
	// the attempt counted at its claim is uncounted. Its last error stays.
	SettleReleased
	// SettleStarted: the claim's handler has started; the claim goes on (the
	// delivery stays running under the same token and lease). Until it is written,
	// a lease that ends uncounts the attempt its claim counted: the delivery was
	// claimed (ahead of a free worker, say) and never run.
	SettleStarted
)

func (o SettleOutcome) String() string {
	switch o {
	case SettleSucceeded:
		return string(DeliverySucceeded)
	case SettleRetryWait:
		return string(DeliveryRetryWait)
	case SettleFailed:
		return string(DeliveryFailed)
	case SettleReleased:
		return "released"
	case SettleStarted:
		return "started"
	}
	return "unknown"
}

// State returns the delivery state the outcome settles to, "" when o is not an outcome.
func (o SettleOutcome) State() DeliveryState {
	switch o {
	case SettleSucceeded:
		return DeliverySucceeded
	case SettleRetryWait:
		return DeliveryRetryWait
	case SettleFailed:
		return DeliveryFailed
	case SettleReleased:
		return DeliveryPending
	case SettleStarted:
		return DeliveryRunning
	}
	return ""
}

// Settlement settles one claimed delivery.
type Settlement struct {
	ID      int64
	Token   int64
	Outcome SettleOutcome
	// RetryAfter is how long after the settlement (by the store's clock) to try again,
	// for SettleRetryWait; never negative.
	RetryAfter time.Duration
	// ErrorCode is the last error's code ("http.429", "timeout"), "" for none.
	ErrorCode string
	// Error is the last error's text as the log has it ("jobs.create_job refused:
	// http_503 (HTTP 503, temporary)"), at most MaxErrorText bytes; "" for none.
	Error string
}

// MaxErrorText is the most of an error's text a delivery keeps.
const MaxErrorText = 1024

// ListState selects what List lists.
type ListState string

// The states List filters on. A delivery that is pending, running or waiting to retry is
// listed as pending; succeeded deliveries only by ListSucceeded and ListAll (parked
// messages never succeed).
const (
	ListFailed    ListState = "failed"
	ListPending   ListState = "pending"
	ListDismissed ListState = "dismissed"
	ListSucceeded ListState = "succeeded"
	ListAll       ListState = "all"
)

// Filter selects the entries of List.
type Filter struct {
	// State is the listing state; "" means failed.
	State ListState
	// Limit caps the entries, 0 for no cap.
	Limit int
}

// Entry is a failed (or pending, or dismissed) delivery or parked message, as operators see
// it.
type Entry struct {
	ID ID
	// State is the listing state: failed, pending or dismissed.
	State ListState
	// RowState is the row's own state: for a delivery, one of DeliveryStates; for a parked
	// message, the same as State.
	RowState string
	// Source is where the message came from: "queue warehouse_queue".
	Source string
	// Subscriber is the delivery's subscriber; "" for a parked message.
	Subscriber string
	// EventName is the event; for a parked message "" when none was read.
	EventName string
	// WireType is a parked message's wire type, "" when none was read.
	WireType string
	// ReceivedID is the received message's id: a delivery's, or a parked message's when
	// one was read before it was parked ("" when none was).
	ReceivedID string
	// Code is the delivery's last error code, or the parked message's reason.
	Code string
	// Error is the delivery's last error's text (Settlement.Error), "" when none was kept.
	Error       string
	Problems    []Problem
	Attempts    int
	MaxAttempts int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// NextAttemptAt, LeaseUntil, SettledAt and DismissedAt are zero when not set.
	// NextAttemptAt is a pending or retry_wait delivery's; LeaseUntil a running one's: the
	// end of the lease of the process that holds it (another may claim it after).
	NextAttemptAt time.Time
	LeaseUntil    time.Time
	SettledAt     time.Time
	DismissedAt   time.Time
	// BodySHA256 is the hex sha256 of a parked message's body.
	BodySHA256 string
	// Headers are a delivery's header values, as its message was kept with them
	// (Keep.Headers); only from Show, nil for a parked message and when there are none.
	Headers map[string]string
	// Body is the parked message's body, or the delivery's event JSON; only from Show with
	// the body asked for.
	Body []byte
	// AttemptLog is a delivery's attempts, oldest first: each settled attempt's time, outcome and
	// error (the newest MaxShownAttempts); only from Show, nil for a parked message.
	AttemptLog []Attempt
}

// Attempt is one settled attempt of a delivery, as the store wrote it in the statement
// that settled it. A released claim (SettleReleased) and a handler's start
// (SettleStarted) are none; nor is an attempt whose lease ended before it was settled.
type Attempt struct {
	// N is the attempt's number (Entry.Attempts when it was settled; it starts again at 1
	// after an operator's retry).
	N int
	// At is when it was settled, by the store's clock.
	At time.Time
	// Outcome is the state it settled to: succeeded, retry_wait or failed.
	Outcome DeliveryState
	// Code and Error are its error's code and text ("" for none), the text bounded as
	// Settlement.Error is.
	Code  string
	Error string
}

// MaxShownAttempts is the most attempts Show returns for a delivery: the newest.
const MaxShownAttempts = 100

// Label is the entry's one-line name: "subscriber pack_order · OrderShipped" for a
// delivery, "queue warehouse_queue · OrderShipped" for a parked message (its wire type when
// no event was read, "?" when neither).
func (e Entry) Label() string {
	if e.ID.Kind == KindDelivery {
		return DeliveryLabel(e.Subscriber, e.EventName)
	}
	return ParkedLabel(e.Source, e.EventName, e.WireType)
}

// DeliveryLabel is a delivery's label: "subscriber pack_order · OrderShipped".
func DeliveryLabel(subscriber, eventName string) string {
	return "subscriber " + subscriber + " · " + eventName
}

// ParkedLabel is a parked message's label: its source, then the event name when one was
// read, else the wire type, else "?".
func ParkedLabel(source, eventName, wireType string) string {
	what := eventName
	if what == "" {
		what = wireType
	}
	if what == "" {
		what = "?"
	}
	return source + " · " + what
}

// Housekept counts what Housekeep deleted.
type Housekept struct {
	ReceivedIDs    int64
	ParkedMessages int64
	// Deliveries counts deleted deliveries, succeeded and dismissed.
	Deliveries int64
	Outbox     int64
	// Statements is how many deleting statements ran; Busy says a table may have more
	// to delete (a full last batch, or the deadline reached).
	Statements int
	Busy       bool
}

// Total is the number of rows deleted.
func (h Housekept) Total() int64 { return h.ReceivedIDs + h.ParkedMessages + h.Deliveries + h.Outbox }

// HousekeepingRun is what one Housekeep call deleted, as the store recorded it (a call
// that deleted nothing is not recorded).
type HousekeepingRun struct {
	// At is when it was recorded, by the store's clock: the call's end.
	At             time.Time
	ReceivedIDs    int64
	ParkedMessages int64
	Deliveries     int64
	Outbox         int64
	// More says a table may have had more to delete (Housekept.Busy).
	More bool
}

// HousekeepingRunsKept is how many recorded runs the store keeps: recording a run
// deletes the oldest beyond it (at most 100 a run).
const HousekeepingRunsKept = 1000

// Stats counts the rows of the store.
type Stats struct {
	ReceivedIDs int64
	Outbox      int64
	// Deliveries counts deliveries by state; a state without rows is absent.
	Deliveries map[DeliveryState]int64
	// Parked counts parked messages by reason and state; absent when 0.
	Parked map[ParkedKey]int64
	// BySubscriber counts deliveries by subscriber and state; absent when 0.
	BySubscriber map[SubscriberKey]int64
	// OldestPending is when the oldest delivery not yet settled (pending, running or
	// retry_wait) was written; zero when there is none.
	OldestPending time.Time
	// Tables are the store's tables with their rows, and their size on disk with
	// indexes (PostgreSQL's pg_total_relation_size; -1 on SQLite, one file).
	Tables []TableStats
}

// SubscriberKey is a (subscriber, state) pair of Stats.BySubscriber.
type SubscriberKey struct {
	Subscriber string
	State      DeliveryState
}

// TableStats is one table's rows and bytes.
type TableStats struct {
	Name  string
	Rows  int64
	Bytes int64
}

// ParkedKey is a (reason, state) pair of Stats.Parked.
type ParkedKey struct {
	Reason Reason
	State  ParkedState
}

// ParkedTotal is the number of parked messages.
func (s Stats) ParkedTotal() int64 {
	var n int64
	for _, c := range s.Parked {
		n += c
	}
	return n
}

// DeliveriesTotal is the number of deliveries.
func (s Stats) DeliveriesTotal() int64 {
	var n int64
	for _, c := range s.Deliveries {
		n += c
	}
	return n
}
