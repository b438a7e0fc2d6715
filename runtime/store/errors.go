package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Class is what a failure of the store means for the caller.
type Class uint8

// The classes of store errors.
const (
	// ClassOther: neither transient nor a refusal of the data — a schema mismatch, a bug,
	// a misuse. Retrying will not help; neither will parking the message.
	ClassOther Class = iota
	// ClassTransient: the store could not do it now (unreachable, connection lost,
	// serialization failure, deadlock, timeout, shutdown, busy). Nothing was committed by
	// the failed call; doing it again later may work.
	ClassTransient
	// ClassRefused: the store refused the statement as it would every time (PostgreSQL
	// SQLSTATE classes 22 data exception and 23 integrity constraint violation, 54000;
	// SQLite constraint, mismatch and too-big errors).
	ClassRefused
)

func (c Class) String() string {
	switch c {
	case ClassTransient:
		return "transient"
	case ClassRefused:
		return "refused"
	}
	return "other"
}

// Error is a failure of the store, classified.
type Error struct {
	// Op is what the store was doing: "keep", "claim deliveries", "migrate".
	Op    string
	Class Class
	// Code is the database's own code: the SQLSTATE on PostgreSQL ("22021"), the result
	// code name on SQLite ("SQLITE_CONSTRAINT_CHECK"); "" when the failure was not the
	// database's answer (a lost connection, a timeout).
	Code string
	// Err is the underlying error. Its text never holds a value of the data: the adapters
	// keep the database's message and leave out its detail.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("store: ")
	b.WriteString(e.Op)
	switch e.Class {
	case ClassTransient:
		b.WriteString(" (transient)")
	case ClassRefused:
		b.WriteString(" refused")
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("failed")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns err's class: the Class of the first *Error in its chain; context
// cancellation and deadlines are transient; anything else is ClassOther.
func ClassOf(err error) Class {
	if err == nil {
		return ClassOther
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Class
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return ClassTransient
	}
	return ClassOther
}

// IsTransient reports whether err is a failure that may not happen again: the caller
// leaves the work where it is (a message on its queue) and tries later.
func IsTransient(err error) bool { return err != nil && ClassOf(err) == ClassTransient }

// IsRefused reports whether err is the store refusing a statement as it would every time.
func IsRefused(err error) bool { return err != nil && ClassOf(err) == ClassRefused }

// SchemaError is a mismatch between the database's schema and a statement of the store,
// found when the store starts (Migrate).
type SchemaError struct {
	// Table is the table at fault, or the tables the statement touches, comma-separated,
	// when the database did not say which.
	Table string
	// Statement is the statement's name in the store: "claim deliveries".
	Statement string
	// Column is the column missing, when that was the mismatch.
	Column string
	Err    error
}

func (e *SchemaError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("store schema mismatch: table %s has no column %s, which statement %q uses", e.Table, e.Column, e.Statement)
	}
	msg := "does not match the schema"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return fmt.Sprintf("store schema mismatch: statement %q on table %s %s", e.Statement, e.Table, msg)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// ErrNoStore is wrapped by the error of OpenExisting when the database holds no events'
// store: a SQLite file that does not exist, or a database jadpo never migrated.
var ErrNoStore = errors.New("no events' store")

// ErrUnknownID is wrapped by the error of Show for an id that names nothing.
var ErrUnknownID = errors.New("no such delivery or parked message")

// StateUnknown is the state a Refusal gives an id that names nothing.
const StateUnknown = "unknown"

// Refusal is one id that Retry or Dismiss refused, and the state it is in.
type Refusal struct {
	ID ID
	// State is the row's state ("succeeded", "pending"), or StateUnknown.
	State string
}

// StateError is Retry or Dismiss refusing ids in the wrong state, or unknown; the call
// changed nothing at all.
type StateError struct {
	// Op is "retry" or "dismiss".
	Op      string
	Refused []Refusal
}

func (e *StateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s refused, nothing changed: ", e.Op)
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString(", ")
		}
		if r.State == StateUnknown {
			fmt.Fprintf(&b, "%s is unknown", r.ID)
		} else {
			fmt.Fprintf(&b, "%s is %s", r.ID, r.State)
		}
	}
	fmt.Fprintf(&b, " (only a failed delivery or parked message can be %s)", pastTense(e.Op))
	return b.String()
}

func pastTense(op string) string {
	switch op {
	case "retry":
		return "retried"
	case "dismiss":
		return "dismissed"
	}
	return op + "ed"
}
