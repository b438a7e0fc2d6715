package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/jadpo/jadpo/runtime/store"
)

// classify says what a failure of SQLite means for the caller, and its result code.
//
// Refused, as every time: SQLITE_CONSTRAINT (a CHECK, NOT NULL, unique, foreign key or
// STRICT type), SQLITE_MISMATCH and SQLITE_TOOBIG. Transient: SQLITE_BUSY and
// SQLITE_LOCKED (another process holds the write lock past the busy timeout),
// SQLITE_NOMEM, SQLITE_INTERRUPT, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN,
// SQLITE_PROTOCOL, SQLITE_SCHEMA, a cancelled context and a bad connection.
func classify(err error) (store.Class, string) {
	var se *msqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		name := codeName(code)
		switch code & 0xff {
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG:
			return store.ClassRefused, name
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_INTERRUPT,
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL,
			sqlite3.SQLITE_SCHEMA:
			return store.ClassTransient, name
		}
		return store.ClassOther, name
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return store.ClassTransient, ""
	}
	return store.ClassOther, ""
}

var codeNames = map[int]string{
	sqlite3.SQLITE_ERROR:                 "SQLITE_ERROR",
	sqlite3.SQLITE_BUSY:                  "SQLITE_BUSY",
	sqlite3.SQLITE_BUSY_SNAPSHOT:         "SQLITE_BUSY_SNAPSHOT",
	sqlite3.SQLITE_BUSY_TIMEOUT:          "SQLITE_BUSY_TIMEOUT",
	sqlite3.SQLITE_LOCKED:                "SQLITE_LOCKED",
	sqlite3.SQLITE_NOMEM:                 "SQLITE_NOMEM",
	sqlite3.SQLITE_INTERRUPT:             "SQLITE_INTERRUPT",
	sqlite3.SQLITE_IOERR:                 "SQLITE_IOERR",
	sqlite3.SQLITE_FULL:                  "SQLITE_FULL",
	sqlite3.SQLITE_CANTOPEN:              "SQLITE_CANTOPEN",
	sqlite3.SQLITE_PROTOCOL:              "SQLITE_PROTOCOL",
	sqlite3.SQLITE_SCHEMA:                "SQLITE_SCHEMA",
	sqlite3.SQLITE_TOOBIG:                "SQLITE_TOOBIG",
	sqlite3.SQLITE_MISMATCH:              "SQLITE_MISMATCH",
	sqlite3.SQLITE_READONLY:              "SQLITE_READONLY",
	sqlite3.SQLITE_CORRUPT:               "SQLITE_CORRUPT",
	sqlite3.SQLITE_NOTADB:                "SQLITE_NOTADB",
	sqlite3.SQLITE_CONSTRAINT:            "SQLITE_CONSTRAINT",
	sqlite3.SQLITE_CONSTRAINT_CHECK:      "SQLITE_CONSTRAINT_CHECK",
	sqlite3.SQLITE_CONSTRAINT_NOTNULL:    "SQLITE_CONSTRAINT_NOTNULL",
	sqlite3.SQLITE_CONSTRAINT_UNIQUE:     "SQLITE_CONSTRAINT_UNIQUE",
	sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY: "SQLITE_CONSTRAINT_PRIMARYKEY",
	sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY: "SQLITE_CONSTRAINT_FOREIGNKEY",
	sqlite3.SQLITE_CONSTRAINT_DATATYPE:   "SQLITE_CONSTRAINT_DATATYPE",
}

func codeName(code int) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	if n, ok := codeNames[code&0xff]; ok {
		return fmt.Sprintf("%s (%d)", n, code)
	}
	return fmt.Sprintf("SQLITE (%d)", code)
}

// wrap classifies err as a *store.Error of op; nil stays nil, and a *store.Error or
// *store.SchemaError is kept.
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
