package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// twoQueuesOneTable is examples/jobs with the seed's two messages on one table, each read by a
// connection and queue of its own: order_jobs lists packing and reads it by the default fetch,
// receipt_jobs lists receipts and reads them by a join.
var twoQueuesOneTable = []checktest.Edit{{Old: `queue order_jobs {
    id_at: "job_id"
    type_at: "name"
    events: {
        PackingRequested { wire_name: "packing" }
        ReceiptRequested { wire_name: "receipts" }
    }
}`, New: `queue order_jobs {
    id_at: "job_id"
    type_at: "name"
    events: {
        PackingRequested { wire_name: "packing" }
    }
}

connection receipt_jobs {
    package: SqlInbox.v1
    credential: { url: config.jobs_database_url }
    settings: {
        table: "order_jobs"
        id: "job_id"
        group: "name"
        attempt: "attempt"
        headers: "tenant, trace, order_id"
        fetch: "SELECT j.job_id, j.name, j.attempt, j.tenant, j.trace, j.order_id, o.customer FROM order_jobs j JOIN orders o ON o.id = j.order_id WHERE j.job_id = ANY($1)"
    }
}

queue receipt_jobs {
    id_at: "job_id"
    type_at: "name"
    events: {
        ReceiptRequested { wire_name: "receipts" }
    }
}`}}

// Each queue on a shared table claims only the rows of the kinds it lists (the audit's
// order_jobs took receipts rows and parked them unlisted_type); a row of a kind no queue
// lists, or of none, waits in the table, never claimed.
func TestSQLInboxQueuesShareATableByKind(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newSQLWorld(t, kind, twoQueuesOneTable...)
			if _, err := w.inbox.Exec(context.Background(), `INSERT INTO orders VALUES (8, 'Ada', 100)`); err != nil {
				t.Fatal(err)
			}
			w.insert("packing", "acme", "", 7, "fragile")
			w.insert("receipts", "acme", "", 8, "")
			w.insert("refund", "acme", "", 9, "") // a kind no queue lists
			w.insert("packing", "acme", "", 10, "")
			if _, err := w.inbox.Exec(context.Background(), `INSERT INTO order_jobs (tenant, order_id) VALUES ('acme', 11)`); err != nil {
				t.Fatal(err) // a job of no kind
			}
			wantReport(t, w.tick(), "received 3 kept 3 repeats 0 parked 0 left 0 acked 3")
			wantRows(t, "outbox", w.env.Query(`SELECT source, event_name, received_id, CAST(event_json AS TEXT) FROM jadpo_outbox ORDER BY source, received_id`),
				row("queue order_jobs", "PackingRequested", "1", `{"note":"fragile","order_id":7,"tenant":"acme"}`),
				row("queue order_jobs", "PackingRequested", "4", `{"order_id":10,"tenant":"acme"}`),
				row("queue receipt_jobs", "ReceiptRequested", "2", `{"order_id":8,"tenant":"acme"}`))
			if ps := w.parked("failed"); len(ps) != 0 {
				t.Fatalf("parked %+v", ps)
			}
			// Never claimed: their attempt is still 0, tick after tick.
			wantReport(t, w.tick(), "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
			if got := strings.Join(w.rows(), ","); got != "3:0,5:0" {
				t.Fatalf("rows left: %s, want the refund and the job of no kind, unclaimed", got)
			}
		})
	}
}

// claimEveryRow is examples/jobs without group: its queue claims every row, the kind
// column named in columns: to give type_at its value (receiving.md's way to park the kinds a
// queue does not list).
var claimEveryRow = checktest.Edit{Old: `group: "name"
        attempt: "attempt"
        headers: "tenant, trace, order_id"
        columns: "note"`, New: `attempt: "attempt"
        headers: "tenant, trace, order_id"
        columns: "name, note"`}

// Without group:, as before, the queue claims every row, and a kind it does not list is
// parked unlisted_type.
func TestSQLInboxWithoutGroupClaimsEveryRow(t *testing.T) {
	w := newSQLWorld(t, "sqlite", claimEveryRow)
	w.insert("packing", "acme", "", 7, "")
	w.insert("refund", "acme", "", 9, "")
	wantReport(t, w.tick(), "received 2 kept 1 repeats 0 parked 1 left 0 acked 2")
	ps := w.parked("failed")
	if len(ps) != 1 || ps[0].Code != "unlisted_type" {
		t.Fatalf("parked %+v", ps)
	}
	if got := w.rows(); len(got) != 0 {
		t.Fatalf("rows left: %v", got)
	}
}
