// Package sqlinbox is jadpo's sql_inbox receiving driver: a queue that is a table in a
// PostgreSQL database other services write jobs into (modelled on ruststream-sqlx's inbox,
// headers layout). It knows nothing of jadpo's events' store: it claims rows, reads them as
// JSON bodies, and deletes the ones it is told are settled.
//
// [Source] is the driver the runtime receives through (a providers/queue.Source, opened by
// [OpenSource] from the connection: [TableOf] reads its settings, its credential's url is the
// database); [Inbox] and [Batch] are the database side it is built on.
//
// # The table
//
// A [Table] names the columns that play roles (the generated id, the group telling the job's
// kind, the attempt counter, the lease form's locked_until), the header columns and the
// message's own columns. Every name must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at
// most 63 bytes); names are quoted in SQL all the same, so they are case-sensitive. [Open]
// builds the statements and prepares each one, so a column or table the database lacks stops
// the start with an error naming the table and the statement. The rules that need no database
// (the names, a column named once, the settings each form takes) are one function, which Open
// applies and `jadpo check` too, through the driver's contract (its Check), to the settings it
// knows; the contract's Body gives it the default fetch's columns, to which it holds the listed
// events' required fields.
//
// # Kinds: several inboxes on one table
//
// A table may hold several kinds of job, each read by its own queue (the seed's `packing` by
// the default fetch, its `receipts` by a join): a connection and queue for each, all naming the
// same table. With Table.Group set, Table.Kinds are the group values an inbox claims: every form's
// claim takes only the rows whose group, compared as text, is one of them ($2, a text array):
//
//	SELECT "job_id" FROM "order_jobs" WHERE "name"::text = ANY($2::text[]) ORDER BY "job_id" LIMIT $1 FOR UPDATE SKIP LOCKED
//
// (the lease form adds it to the free-row condition, the advisory lock form to its candidate
// select). [OpenSource] sets Kinds to its queue's wire names (queue.Options.Kinds), so each
// queue reads only the kinds it lists. A row whose group no inbox lists, or whose group is
// NULL, is claimed by none: it waits in the table, its attempt untouched, until a queue lists
// its kind (or someone deletes it). It is not parked `unlisted_type` as before, because a
// table shared by several queues holds the others' kinds, which are not mistakes. To have a
// queue take every row and park the kinds it does not list, leave Group out (and name the
// kind column in Columns, for the queue's type_at). Without Group, or with no Kinds (a queue
// of one kind, without type_at, has no wire names), the claim takes every row, as before.
// Kinds without Group are refused.
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
// AdvisoryLock: rows are held by PostgreSQL session advisory locks, not row locks or a column.
// Table.LockKey names the columns whose values make a row's lock key (empty: the id column);
// rows sharing a key are claimed by one process at a time. LockKey is refused in the other
// forms and LockedUntil in this one. A claim acquires one pool connection and holds it until
// Finish or Abandon (the locks are its session's). On it, the claim
//
//  1. selects up to 4 × max candidates in id order, without row locks, each with its key as text
//     (a JSON array of the key's values, so no two keys' texts meet):
//     SELECT "job_id", json_build_array("tenant")::text FROM "order_jobs" ORDER BY "job_id" LIMIT $1
//  2. for each candidate, in id order, takes a session lock on (namespace, the key's hash), and
//     keeps the row when it gets it, skips it when another session holds the key, and stops at
//     max rows (the locks are sent as many at a time as rows are still wanted):
//     SELECT pg_try_advisory_lock($1, hashtext($2))
//     The namespace ($1) is hashtext('<schema>.<table>'), the table's own schema resolved at
//     Open, so two inboxes do not meet. Session locks are reentrant: a claim may take several
//     rows of one key, one acquisition each;
//  3. increments the attempt of the kept rows (when Attempt is set) and runs the fetch once per
//     row, with that row's id alone ($1 a one-element array), sent as one pipeline (one implicit
//     transaction, committed at its end, so the increment survives an Abandon):
//     UPDATE "order_jobs" SET "attempt" = "attempt" + 1 WHERE "job_id" = ANY($1)
//  4. checks each id the fetch did not return: SELECT 1 FROM "order_jobs" WHERE "job_id" = $1.
//     A row still there is in [Batch.Missing], its own row read as for the other forms (see The
//     fetch); a row gone (finished by another process between the candidate select and the
//     lock) is dropped from the batch silently and its lock released.
//
// Finish deletes the acked rows on the held connection (autocommit:
// DELETE FROM "order_jobs" WHERE "job_id" = ANY($1)), then releases every lock, once per
// acquisition (SELECT pg_advisory_unlock($1, hashtext(k)) FROM unnest($2::text[]) AS k), and gives
// the connection back; a failed delete still releases them. Abandon only releases. If an unlock
// fails, the connection is closed instead of given back: its session ends, and with it its
// locks. So does a process or connection that dies: its rows are claimed again at once.
// Candidates held elsewhere use up the 4 × max window: a claim behind many rows of held keys may
// find fewer than max rows, or none, while later rows are free. Two keys whose hashes collide
// are claimed one process at a time, as if they were one key.
//
// # The fetch
//
// The fetch reads the claimed rows (in the advisory lock form, one row per run): $1 is the array of claimed ids, passed with the Go type pgx
// returned for the id column (so = ANY($1) uses the id's index). The default fetch selects the
// id, group, attempt, (lease form) locked_until, header and own columns from the table. A
// custom fetch (Table.Fetch) is the app's own SQL, e.g. a join; it must return the id column
// under its name, the group, attempt and header columns under theirs (Open refuses one that
// leaves any out, naming it), with no two result columns of the same name. Rows are matched to claimed ids
// by the id column's value as text; a claimed id with no row is reported in [Batch.Missing];
// a second row for the same id is ignored.
//
// For each Missing id the claim then reads the table's own row, with every column of the
// table, by the row statement (prepared at [Open] like the others, run in the claim's
// transaction or on its connection): SELECT * FROM "order_jobs" WHERE "job_id" = ANY($1).
// [Batch.Unfetched] holds it, encoded by the JSON rules below, headers and all. A row the table
// no longer holds either (deleted by another process since the claim) gets a body of its id
// alone ({"job_id":8}); the advisory lock form has dropped such a row already.
//
// # Parking and retrying
//
// [Source] parks a Missing id (the runtime's problem `(body): row`) with its Unfetched row as
// its body, so each keeps its own columns and its own parked row: an empty body, shared by
// every missing row, made the second "parked already" under the first, and its job was lost
// with its deleted row. The runtime reads that body only for its type (the group column), so
// the parked row is labelled by its kind. What parking keeps of any row is its body without the
// columns each claim changes, the attempt and locked_until ([Source.ParkedBody]). A parked row
// an operator retries is read from that copy: the table's columns, not a custom fetch's. Kept,
// it travels with its header columns' values, read back from the copy by
// [Source.ParkedHeaders] as a first read gives them.
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
// canonical; any other value as its JSON text from the rules above. A NULL header is left out.
package sqlinbox
