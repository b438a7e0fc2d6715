package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// jadpo dev: a line typed on standard input is sent to the queue it names,
// the running app keeps it, and its subscriber is run against the json_http
// stand-in; a signal ends it with exit 0.
func TestDevSendsTypedMessages(t *testing.T) {
	errOut := runDevUntil(t, "warehouse", "nope_queue {}\n"+
		`warehouse_queue {"id":"d-1","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":1}]}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 && s.Deliveries[store.DeliverySucceeded] == 1 })
	if !strings.Contains(errOut, `no queue \"nope_queue\"`) && !strings.Contains(errOut, `no queue "nope_queue"`) {
		t.Fatalf("an unknown queue was not named:\n%s", errOut)
	}
}

// runDevUntil runs `jadpo dev` on a copy of examples/<example>, types input,
// waits until the dev store's stats satisfy done, then stops it with a
// cancelled context (a signal's) and wants exit 0. It returns what dev
// wrote to standard error.
func runDevUntil(t *testing.T, example, input string, done func(store.Stats) bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", example), dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, typed := io.Pipe()
	var out, errOut syncBuffer
	exited := make(chan int, 1)
	go func() { exited <- runContext(ctx, []string{"dev", dir, "--log-format", "json"}, in, &out, &errOut) }()
	if _, err := io.WriteString(typed, input); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := st.Stats(context.Background())
		if err == nil && done(s) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the typed messages were not kept and delivered: %+v %v\n%s", s, err, errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	typed.Close()
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jadpo dev did not stop")
	}
	return errOut.String()
}

// syncBuffer is a bytes buffer safe for the command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// jadpo dev with a Cloudflare queue (examples/returns): a typed line goes to
// the local Cloudflare Queues fake, the app pulls and keeps it.
func TestDevCloudflareQueue(t *testing.T) {
	errOut := runDevUntil(t, "returns", `returns_queue {"return_id":"r-1","type":"return_requested","order_id":"o-1","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 })
	if !strings.Contains(errOut, "Cloudflare Queues fake on http://127.0.0.1:") {
		t.Fatalf("the Cloudflare fake's address is not shown:\n%s", errOut)
	}
}

// Issue 12 point 6: a tick's summary names what its count is: messages the
// store could not take, handed back to the queue; it never says "left on the
// queue" (what waits there is the queue's to say).
func TestTickSummaryNamesWhatItCounts(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := runtimetest.NewFlakyStore(env.Store())
	st.FailKeeps(-1)
	rt := env.Runtime(st, runtime.Options{})
	for i := range 3 {
		env.Send("warehouse_queue", runtimetest.OrderShipped(fmt.Sprintf("m-%d", i)))
	}
	rep, err := rt.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printTick(&b, rep)
	if got := b.String(); !strings.Contains(got, "received 3: kept 0, repeats 0, parked 0, handed back 3, acknowledged 0") ||
		strings.Contains(got, "left on the queue") {
		t.Fatalf("tick summary %q", got)
	}
}

// runDevToEnd runs `jadpo dev` on dir with input as standard input and
// waits for it to exit by itself (end of input), within 60 s.
func runDevToEnd(t *testing.T, dir, input string, args ...string) (errOut string, code int) {
	t.Helper()
	var out, errb syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- runContext(context.Background(), append([]string{"dev", dir}, args...), strings.NewReader(input), &out, &errb)
	}()
	select {
	case code = <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("jadpo dev did not exit at the end of its input\n%s", errb.String())
	}
	return errb.String(), code
}

// copyExample copies examples/<name> into a temporary folder, applying
// each old -> new replacement to its app.jadpo (each must apply).
func copyExample(t *testing.T, name string, edits ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", name), dir); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.jadpo")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("app.jadpo has no %q", edits[i])
		}
		s = strings.ReplaceAll(s, edits[i], edits[i+1])
	}
	if err := os.WriteFile(app, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recordDials makes devDial record every address dev's app dials (what
// reaches the network, after dev's own guard) and returns them.
func recordDials(t *testing.T) func() []string {
	t.Helper()
	var mu sync.Mutex
	var addrs []string
	saved := devDial
	devDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		addrs = append(addrs, network+" "+addr)
		mu.Unlock()
		return saved(ctx, network, addr)
	}
	t.Cleanup(func() { devDial = saved })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), addrs...)
	}
}

// Issue 12 point 1: an app whose hosts and queue URL are written literally as AWS's and a service's real addresses runs wholly
// against the local stand-ins: the message typed is received and delivered,
// and every address dialled is on this machine.
func TestDevNeverLeavesTheMachine(t *testing.T) {
	dir := copyExample(t, "warehouse",
		"host: config.sqs_host", `host: "https://sqs.eu-west-1.amazonaws.com"`,
		"queue_url: config.warehouse_queue_url", `queue_url: "https://sqs.eu-west-1.amazonaws.com/123456789012/warehouse"`,
		"host: config.packing_host", `host: "https://packing.example.com"`)
	if out, errOut, code := runCLI("check", dir); code != 0 {
		t.Fatalf("the literal app does not check clean: %s%s", out, errOut)
	}
	dials := recordDials(t)
	errOut, code := runDevToEnd(t, dir,
		`warehouse_queue {"id":"d-1","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":1}]}`+"\n")
	if code != 0 || strings.Contains(errOut, "no queue") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Stats(context.Background())
	if err != nil || s.Outbox != 1 || s.Deliveries[store.DeliverySucceeded] != 1 {
		t.Fatalf("the typed message was not kept and delivered: %+v %v\n%s", s, err, errOut)
	}
	got := dials()
	if len(got) == 0 {
		t.Fatal("no address was dialled: the test saw nothing")
	}
	for _, a := range got {
		network, addr, _ := strings.Cut(a, " ")
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); network == "unix" || err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("dev dialled %s, off the machine", a)
		}
	}
}

// Issue 12 point 1: a store or a SQL inbox's database on another host is
// refused at the start, naming it and the fix, never the URL's password,
// and nothing is dialled.
func TestDevRefusesDatabasesOffTheMachine(t *testing.T) {
	dials := recordDials(t)
	warehouse := copyExample(t, "warehouse")
	errOut, code := runDevToEnd(t, warehouse, "", "--database", "postgres://jadpo:s3cret-pw@db.example.com:5432/events")
	if code == 0 || !strings.Contains(errOut, "the events' store is on db.example.com, not this machine") || strings.Contains(errOut, "s3cret-pw") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	errOut, code = runDevToEnd(t, warehouse, "", "--database", "postgres://jadpo@127.0.0.1/events?host=db.example.com")
	if code == 0 || !strings.Contains(errOut, "not this machine") {
		t.Fatalf("a host given in the query was not seen: exit %d\n%s", code, errOut)
	}
	// DATABASE_URL and the store's database: dev either keeps to a store on
	// this machine or refuses the one given; it never opens another host's.
	for name, dir := range map[string]string{
		"DATABASE_URL":         warehouse,
		"the store's database": copyExample(t, "warehouse", "store primary {\n}", "store primary {\n    database: \"postgres://jadpo@db.example.com/events\"\n}"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", "postgres://jadpo:s3cret-pw@db.example.com/events")
			errOut, code := runDevToEnd(t, dir, "")
			if strings.Contains(errOut, "s3cret-pw") || code == 0 && !strings.Contains(errOut, "store sqlite:") ||
				code != 0 && !strings.Contains(errOut, "the events' store is on db.example.com, not this machine") {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
		})
	}
	for _, a := range dials() {
		if !strings.HasPrefix(a, "tcp 127.0.0.1:") {
			t.Fatalf("dialled %s", a)
		}
	}
	dials = recordDials(t)
	jobs := copyExample(t, "jobs")
	t.Setenv("JOBS_DATABASE_URL", "postgres://jadpo:s3cret-pw@jobs.example.com/jobs")
	errOut, code = runDevToEnd(t, jobs, "")
	if code == 0 || !strings.Contains(errOut, "connection order_jobs: its database is on jobs.example.com, not this machine") ||
		!strings.Contains(errOut, "set JOBS_DATABASE_URL to a PostgreSQL database on this machine") || strings.Contains(errOut, "s3cret-pw") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if got := dials(); len(got) != 0 {
		t.Fatalf("dialled %v", got)
	}
}

// Issue 12 point 7: dev exits (0) when its standard input ends, after
// receiving and delivering what was typed.
func TestDevExitsAtEndOfInput(t *testing.T) {
	dir := copyExample(t, "warehouse")
	errOut, code := runDevToEnd(t, dir,
		`warehouse_queue {"id":"d-1","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":1}]}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.Stats(context.Background()); err != nil || s.Outbox != 1 || s.Deliveries[store.DeliverySucceeded] != 1 {
		t.Fatalf("the last line (without a newline) was not kept and delivered before exiting: %+v %v\n%s", s, err, errOut)
	}
	if !strings.Contains(errOut, "queues: returns_queue, warehouse_queue;") {
		t.Fatalf("the queues are not listed:\n%s", errOut)
	}
}

// Issue 12 point 7: a parked message's log line names its parked id and
// each failing field by name and rule, never a value.
func TestDevShowsParkedIDAndFailingFields(t *testing.T) {
	dir := copyExample(t, "warehouse")
	errOut, code := runDevToEnd(t, dir,
		`warehouse_queue {"id":"d-9","type":"order_shipped","order_id":"","shipped_at":"yesterday","carrier":"pigeon-VALUE","lines":[]}`+"\n", "--log-format", "text")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var parked string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "msg=parked") {
			parked = l
		}
	}
	for _, want := range []string{"parked_id=p1", "message_id=d-9", "reason=unreadable", "carrier: enum", "order_id: min_length", "shipped_at: format"} {
		if !strings.Contains(parked, want) {
			t.Errorf("the parked line does not show %q: %s", want, parked)
		}
	}
	if strings.Contains(errOut, "pigeon-VALUE") || strings.Contains(errOut, "yesterday") {
		t.Fatalf("a value was shown:\n%s", errOut)
	}
}

// Issue 12 point 7: dev examples/jobs lists its SQL inbox queue, creates
// the inbox table in the given database (in its schema, the URL's
// search_path) and sends a typed line as a row, which is received.
func TestDevSQLInboxCreatesTheTableAndSendsRows(t *testing.T) {
	url := pgtest.FreshURL(t)
	t.Setenv("JOBS_DATABASE_URL", url)
	dir := copyExample(t, "jobs")
	dials := recordDials(t)
	errOut, code := runDevToEnd(t, dir, `order_jobs {"name":"packing","tenant":"t-1","order_id":5,"note":"fragile"}`+"\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"created the SQL inbox table order_jobs in JOBS_DATABASE_URL's database: job_id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name text, attempt integer NOT NULL DEFAULT 0, tenant text, trace text, order_id bigint, note text",
		"queues: order_jobs;",
		"sent to order_jobs (row job_id=1 of order_jobs)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("dev does not say %q:\n%s", want, errOut)
		}
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.Stats(context.Background()); err != nil || s.Outbox != 1 {
		t.Fatalf("the row was not received: %+v %v\n%s", s, err, errOut)
	}
	for _, a := range dials() {
		if !strings.Contains(a, "127.0.0.1:") && !strings.HasPrefix(a, "unix ") && !strings.Contains(a, "localhost:") {
			t.Errorf("dialled %s", a)
		}
	}
	// A second start finds the table and leaves it as it is.
	errOut, code = runDevToEnd(t, dir, "")
	if code != 0 || strings.Contains(errOut, "created the SQL inbox table") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

// Issue 24: `jadpo dev` and `jadpo run` hold a config value from the
// environment to every rule of its type, as tick does: `BATCH_LIMIT=-5`
// for `Int { min: 1 }` stops the start, naming the field and binding.
func TestDevAndRunRefuseAValueAgainstItsRules(t *testing.T) {
	dir := copyExample(t, "warehouse",
		`    packing_host: Url {`, `    batch_limit: Int { binding: "BATCH_LIMIT" min: 1 default: 10 }
    packing_host: Url {`)
	t.Setenv("BATCH_LIMIT", "-5")
	const want = "config field batch_limit (environment variable BATCH_LIMIT) is below the minimum 1"
	if errOut, code := runDevToEnd(t, dir, ""); code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("dev: exit %d\n%s", code, errOut)
	}
	code, _, errOut := cli(t, "run", dir, "--database", "sqlite:"+filepath.Join(t.TempDir(), "s.sqlite"))
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("run: exit %d\n%s", code, errOut)
	}
}

// jadpo dev with a NATS JetStream queue (examples/natsorders): dev embeds a
// NATS server with JetStream, makes the connection's stream and consumer on
// it, and a typed line published there is pulled and kept.
func TestDevNatsJetStream(t *testing.T) {
	errOut := runDevUntil(t, "natsorders", `orders {"id":"o-1","type":"order.placed","order_id":1,"customer":"c-1","total_cents":1200}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 })
	if !strings.Contains(errOut, "NATS server with JetStream (embedded) on nats://127.0.0.1:") {
		t.Fatalf("the embedded NATS server's address is not shown:\n%s", errOut)
	}
}
