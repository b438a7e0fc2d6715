package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jadpo/jadpo/runtime/store"
)

// classify says what a failure of PostgreSQL means for the caller, and its SQLSTATE.
//
// Refused, as every time: class 22 (data exception: a NUL character, invalid UTF-8, text
// that is not JSON), class 23 (integrity: a check or unique constraint) and 54000 (a value
// too long for an index). Transient: class 08 (connection exception), 40001 serialization
// failure, 40P01 deadlock, class 53 (insufficient resources: too many connections, disk
// full), 55P03 lock not available, 57014 query canceled (statement timeout), 57P01-57P03
// and 57P05 (shut down, cannot connect now, idle session timeout), 25P03 (idle in
// transaction timeout), and every failure that is not the server's answer: a connection
// refused or lost, a timeout, a cancelled context.
func classify(err error) (store.Class, string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		code := pgErr.Code
		switch {
		case strings.HasPrefix(code, "22"), strings.HasPrefix(code, "23"), code == "54000":
			return store.ClassRefused, code
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"),
			code == "40001", code == "40P01", code == "55P03", code == "57014",
			code == "57P01", code == "57P02", code == "57P03", code == "57P05", code == "25P03":
			return store.ClassTransient, code
		}
		return store.ClassOther, code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return store.ClassTransient, ""
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return store.ClassTransient, ""
	}
	// pgx reports a connection it has closed (after a fatal error, or a failed
	// resynchronisation) with text only.
	if msg := err.Error(); strings.Contains(msg, "conn closed") || strings.Contains(msg, "conn busy") ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe") {
		return store.ClassTransient, ""
	}
	return store.ClassOther, ""
}

// wrap classifies err as a *store.Error of op; nil stays nil, and a *store.Error is kept.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *store.Error
	if errors.As(err, &se) {
		return err
	}
	var sch *store.SchemaError
	if errors.As(err, &sch) {
		return err
	}
	class, code := classify(err)
	return &store.Error{Op: op, Class: class, Code: code, Err: err}
}
