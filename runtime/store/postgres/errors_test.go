package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jadpo/jadpo/runtime/store"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	for _, c := range []struct {
		err  error
		want store.Class
	}{
		{pg("22021"), store.ClassRefused}, // character not in repertoire: a NUL
		{pg("22P05"), store.ClassRefused}, // untranslatable character
		{pg("22P02"), store.ClassRefused}, // invalid text representation
		{pg("23505"), store.ClassRefused},
		{pg("23514"), store.ClassRefused},
		{pg("54000"), store.ClassRefused},
		{pg("40001"), store.ClassTransient},
		{pg("40P01"), store.ClassTransient},
		{pg("57P01"), store.ClassTransient},
		{pg("57P03"), store.ClassTransient},
		{pg("57014"), store.ClassTransient},
		{pg("08006"), store.ClassTransient},
		{pg("53300"), store.ClassTransient},
		{pg("55P03"), store.ClassTransient},
		{pg("42703"), store.ClassOther}, // undefined column: a schema mismatch
		{pg("42P01"), store.ClassOther},
		{io.ErrUnexpectedEOF, store.ClassTransient},
		{context.DeadlineExceeded, store.ClassTransient},
		{errors.New("conn closed"), store.ClassTransient},
		{errors.New("cannot encode"), store.ClassOther},
	} {
		if got, _ := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	err := wrap("keep", pg("22021"))
	var se *store.Error
	if !errors.As(err, &se) || se.Code != "22021" || se.Op != "keep" || !store.IsRefused(err) {
		t.Errorf("wrap = %#v", err)
	}
}
