package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	for _, id := range []ID{DeliveryID(42), ParkedID(7), DeliveryID(1 << 62)} {
		got, err := ParseID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseID(%q) = %v, %v; want %v", id.String(), got, err, id)
		}
	}
	if id, err := ParseID(" P7 "); err != nil || id != ParkedID(7) {
		t.Errorf("ParseID(\" P7 \") = %v, %v", id, err)
	}
	for _, bad := range []string{"", "d", "x7", "d-1", "d0", "p1.5", "d99999999999999999999", "42"} {
		if id, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) = %v, want an error", bad, id)
		}
	}
	var id ID
	if err := id.UnmarshalText([]byte("d3")); err != nil || id != DeliveryID(3) {
		t.Errorf("UnmarshalText = %v, %v", id, err)
	}
	if b, _ := ParkedID(9).MarshalText(); string(b) != "p9" {
		t.Errorf("MarshalText = %q", b)
	}
}

func TestLabels(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{ID: DeliveryID(1), Subscriber: "pack_order", EventName: "OrderShipped"}, "subscriber pack_order · OrderShipped"},
		{Entry{ID: ParkedID(1), Source: "queue warehouse_queue", EventName: "OrderShipped", WireType: "order.shipped"}, "queue warehouse_queue · OrderShipped"},
		{Entry{ID: ParkedID(2), Source: "queue warehouse_queue", WireType: "order.lost"}, "queue warehouse_queue · order.lost"},
		{Entry{ID: ParkedID(3), Source: "queue warehouse_queue"}, "queue warehouse_queue · ?"},
	} {
		if got := c.e.Label(); got != c.want {
			t.Errorf("Label() = %q, want %q", got, c.want)
		}
	}
}

func TestClassOf(t *testing.T) {
	transient := &Error{Op: "keep", Class: ClassTransient, Err: errors.New("conn lost")}
	refused := &Error{Op: "keep", Class: ClassRefused, Code: "22021", Err: errors.New("bad byte")}
	for _, c := range []struct {
		err       error
		transient bool
		refused   bool
	}{
		{nil, false, false},
		{errors.New("plain"), false, false},
		{transient, true, false},
		{fmt.Errorf("tick: %w", transient), true, false},
		{refused, false, true},
		{context.DeadlineExceeded, true, false},
		{fmt.Errorf("x: %w", context.Canceled), true, false},
		{&SchemaError{Table: "jadpo_outbox", Statement: "keep"}, false, false},
	} {
		if IsTransient(c.err) != c.transient || IsRefused(c.err) != c.refused {
			t.Errorf("%v: transient %v refused %v, want %v %v", c.err, IsTransient(c.err), IsRefused(c.err), c.transient, c.refused)
		}
	}
	if got := transient.Error(); got != "store: keep (transient): conn lost" {
		t.Errorf("Error() = %q", got)
	}
}

func TestStateErrorNamesEachID(t *testing.T) {
	err := &StateError{Op: "retry", Refused: []Refusal{{ID: DeliveryID(42), State: "succeeded"}, {ID: ParkedID(9), State: StateUnknown}}}
	want := "retry refused, nothing changed: d42 is succeeded, p9 is unknown (only a failed delivery or parked message can be retried)"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err.Error(), want)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://jadpo:s3cret@db.example:5432/app?sslmode=require": "postgres://jadpo:xxxxx@db.example:5432/app?sslmode=require",
		"postgres://jadpo@db/app":                                     "postgres://jadpo@db/app",
		"postgres://db/app?user=jadpo&password=s3cret":                "postgres://db/app?password=xxxxx&user=jadpo",
		"sqlite:./jadpo.db":                                           "sqlite:./jadpo.db",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenWithoutAdapter(t *testing.T) {
	// This package's tests link no adapter.
	_, err := Open(context.Background(), "postgres://jadpo:s3cret@localhost/app")
	if err == nil || !strings.Contains(err.Error(), "runtime/store/postgres") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open without the adapter = %v, want the package to import and no password", err)
	}
	_, err = Open(context.Background(), "mysql://jadpo:s3cret@localhost/app")
	if err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Errorf("Open(mysql) = %v", err)
	}
	if _, err := Open(context.Background(), "jadpo.db"); err == nil {
		t.Error("Open of a bare path succeeded")
	}
}

func TestOpenRedactsAdapterErrors(t *testing.T) {
	Register("fake", func(ctx context.Context, url string) (Store, error) {
		return nil, &Error{Op: "connect", Class: ClassTransient, Err: fmt.Errorf("cannot reach %s", url)}
	})
	defer func() {
		adaptersMu.Lock()
		delete(adapters, "fake")
		adaptersMu.Unlock()
	}()
	_, err := Open(context.Background(), "fake://jadpo:s3cret@host/db")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !IsTransient(err) {
		t.Fatalf("Open = %v, want a transient error without the password", err)
	}
}
