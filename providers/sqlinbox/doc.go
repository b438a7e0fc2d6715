// Package sqlinbox is the wire side of jadpo's SQL inbox receiving driver: a queue that is a
// table in a PostgreSQL database other services write jobs into (modelled on ruststream-sqlx's
// inbox, headers layout). It knows nothing of jadpo's events' store: it claims rows, reads them
// as JSON bodies, and deletes the ones it is told are settled.
//
// # The table
//
// A [Table] names the columns that play roles (the generated id, the group telling the job's
// kind, the attempt counter, the lease form's locked_until), the header columns and the
// message's own columns. Every name must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at
// most 63 bytes); names are quoted in SQL all the same, so they are case-sensitive. [Open]
// builds the statements and prepares each one, so a column or table the database lacks stops
// the start with an error naming the table and the statement.
//
// # The forms
//
// RowLock (the default): a claim opens a transaction, selects up to max ids in id order with
// FOR UPDATE SKIP LOCKED, increments the attempt column (when there is one) and runs the fetch,
// all in that transaction, which stays open until [Batch.Finish] (DELETE the acked rows, then
// COMMIT) or [Batch.Abandon] (ROLLBACK). A crash or a lost connection rolls back, so the rows are
// free again at once; the attempt increment survives only a Finish (it is committed with it).
// Each open batch holds one pool connection.
//
// Lease: a claim is one statement that sets locked_until = now() + Lease (and increments the
// attempt) on up to max rows whose lease is absent or over, and commits; the fetch then runs on
// its own. No connection is held. Finish deletes an acked row only while its locked_until is
// still the value this claim set (fencing): a row whose lease ran out and was claimed again
// belongs to the new claim, which set a later value. Unacked rows and abandoned batches wait
// for their lease to run out. The default fetch in this form also returns locked_until.
//
// # The fetch
//
// The fetch reads the claimed rows: $1 is the array of claimed ids, passed with the Go type pgx
// returned for the id column (so = ANY($1) uses the id's index). The default fetch selects the
// id, group, attempt, (lease form) locked_until, header and own columns from the table. A
// custom fetch (Table.Fetch) is the app's own SQL, e.g. a join; it must return the id column
// under its name, with no two result columns of the same name. Rows are matched to claimed ids
// by the id column's value as text; a claimed id with no row is reported in [Batch.Missing];
// a second row for the same id is ignored.
//
// # JSON rules for Row.Body
//
// Body is one JSON object holding every column the fetch returned, in the fetch's order, keyed
// by column name:
//
//   - integers (smallint, integer, bigint, oid) → JSON numbers;
//   - numeric → the number's exact text as a JSON number ("NaN", "Infinity", "-Infinity" as strings);
//   - real, double precision → numbers (NaN and infinities as strings);
//   - text, varchar, char, name, and types pgx does not know (enums, citext, ...) → strings;
//   - boolean → true/false;
//   - timestamptz, timestamp → RFC 3339 text in UTC, with fractional seconds only when non-zero
//     ("infinity"/"-infinity" as they are);
//   - date → "YYYY-MM-DD";
//   - uuid → canonical text;
//   - json, jsonb → the JSON value itself (inside arrays, decoded and encoded again);
//   - bytea → standard base64 text;
//   - arrays → JSON arrays (nested for several dimensions) of the same rules;
//   - other types pgx knows (interval, inet, ...) → their PostgreSQL text as a string;
//   - NULL → null.
//
// Row.Headers holds the header columns' values as text: strings as they are; integers,
// booleans, numerics and floats as decimal text; timestamps RFC 3339 (as in the body); uuids
// canonical; any other value as its JSON text from the rules above. A NULL header, or a header
// column a custom fetch does not return, is left out.
package sqlinbox
