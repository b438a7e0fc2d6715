package natsjs

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

func openOn(t *testing.T, url string, settings map[string]any, cred map[string]string) (queue.Source, error) {
	t.Helper()
	if cred == nil {
		cred = map[string]string{}
	}
	cred[memberURL] = url
	src, err := Driver.Open(&queue.Conn{Name: "jobs", Settings: settings, Credentials: cred}, queue.Options{Queue: "jobs", MaxBatch: 10})
	if err == nil {
		t.Cleanup(src.Close)
	}
	return src, err
}

// A stream or consumer that is not there stops the start, naming it and
// the command (or setting) that makes it.
func TestMissingStreamOrConsumerNamesTheFix(t *testing.T) {
	u, _, js := admin(t)
	name := unique("miss_")
	_, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "c"}, nil)
	if err == nil || !strings.Contains(err.Error(), `no stream "`+name+`"`) || !strings.Contains(err.Error(), "nats stream add "+name) {
		t.Fatalf("a missing stream: %v", err)
	}
	testStream(t, js, name, jetstream.LimitsPolicy)
	_, err = openOn(t, u, map[string]any{settingStream: name, settingConsumer: "absent"}, nil)
	for _, want := range []string{`no consumer "absent"`, "nats consumer add " + name + " absent --pull --ack explicit", "create_consumer: true"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("a missing consumer: %v; want it to say %q", err, want)
		}
	}
}

// With create_consumer the driver makes the durable pull consumer, with
// the settings' filter, ack wait and delivery limit, and explicit acks.
func TestCreatesTheConsumerWhenAsked(t *testing.T) {
	u, _, js := admin(t)
	name := unique("create_")
	subject := testStream(t, js, name, jetstream.LimitsPolicy)
	if _, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "made", settingCreate: true, settingSubject: subject,
		settingAckWait: "45s", settingMaxDeliver: int64(4)}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := js.Consumer(context.Background(), name, "made")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.CachedInfo().Config
	if cfg.Durable != "made" || cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.AckWait != 45*time.Second || cfg.MaxDeliver != 4 || cfg.FilterSubject != subject {
		t.Fatalf("created consumer %+v", cfg)
	}
	// Opened again, the consumer is there and used as it is.
	if _, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "made", settingCreate: true}, nil); err != nil {
		t.Fatal(err)
	}
}

// A push consumer, or one acknowledging otherwise than explicitly, is
// refused with what to make instead.
func TestRefusesConsumersItCannotPull(t *testing.T) {
	u, _, js := admin(t)
	name := unique("kind_")
	testStream(t, js, name, jetstream.LimitsPolicy)
	ctx := context.Background()
	if _, err := js.CreateConsumer(ctx, name, jetstream.ConsumerConfig{Durable: "none", AckPolicy: jetstream.AckNonePolicy}); err != nil {
		t.Fatal(err)
	}
	_, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "none"}, nil)
	if err == nil || !strings.Contains(err.Error(), "explicit policy") {
		t.Fatalf("an ack-none consumer: %v", err)
	}
}

// A message always handed back is delivered max_deliver times and then no
// more; JetStream says so with its MAX_DELIVERIES advisory.
func TestMaxDeliverEndsRedelivery(t *testing.T) {
	u, nc, js := admin(t)
	name := unique("maxd_")
	subject := testStream(t, js, name, jetstream.LimitsPolicy)
	advisories, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + name + ".c")
	if err != nil {
		t.Fatal(err)
	}
	src, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "c", settingCreate: true, settingMaxDeliver: int64(3), settingNakDelay: "1ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(context.Background(), subject, []byte(`{"id":"always-failing"}`)); err != nil {
		t.Fatal(err)
	}
	deliveries := 0
	for range 6 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		b, err := src.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		deliveries += len(b.Messages)
		src.Acknowledge(context.Background(), b) // nothing settled: handed back
	}
	if deliveries != 3 {
		t.Fatalf("delivered %d times, want max_deliver (3)", deliveries)
	}
	m, err := advisories.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no MAX_DELIVERIES advisory: %v", err)
	}
	var adv struct {
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries int    `json:"deliveries"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq != 1 || adv.Deliveries != 3 {
		t.Fatalf("advisory %s (%v)", m.Data, err)
	}
}

// A receive on an empty consumer waits within its context and returns
// with the first message to come, well before the context ends; the body
// is the bytes published (not valid UTF-8 here), the id the stream
// sequence, the same on a redelivery.
func TestReceiveReturnsWhenAMessageComes(t *testing.T) {
	u, _, js := admin(t)
	name := unique("wait_")
	subject := testStream(t, js, name, jetstream.LimitsPolicy)
	src, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "c", settingCreate: true, settingNakDelay: "1ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("\xff\xfe{\"id\":1}\x00")
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = js.Publish(context.Background(), subject, body)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := src.Receive(ctx)
	if err != nil || len(b.Messages) != 1 || ctx.Err() != nil {
		t.Fatalf("receive: %v, %d messages, ctx %v", err, len(b.Messages), ctx.Err())
	}
	if b.Messages[0].Body != string(body) || b.Messages[0].WireID != "1" {
		t.Fatalf("message %+v", b.Messages[0])
	}
	src.Acknowledge(context.Background(), b)
	b, err = src.Receive(ctx)
	if err != nil || len(b.Messages) != 1 || b.Messages[0].WireID != "1" || b.Messages[0].Body != string(body) {
		t.Fatalf("redelivered: %v %+v", err, b)
	}
	b.Messages[0].Settled = true
	if acks := src.Acknowledge(context.Background(), b); acks.Acknowledged != 1 || acks.SingleCalls != 1 {
		t.Fatalf("acks %+v", acks)
	}
}

// authServer is an embedded server demanding authorization.
func authServer(t *testing.T, o *server.Options) string {
	t.Helper()
	o.Host, o.Port, o.NoLog, o.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, true
	o.JetStream, o.StoreDir = true, t.TempDir()
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded server not ready")
	}
	return srv.ClientURL()
}

// A sign-in refused says so and holds no token or password, however given.
func TestAuthErrorHoldsNoSecret(t *testing.T) {
	set := map[string]any{settingStream: "s", settingConsumer: "c"}
	tokenURL := authServer(t, &server.Options{Authorization: "right-token-8c1f"})
	userURL := authServer(t, &server.Options{Username: "app", Password: "right-password-77a2"})
	cases := []struct {
		name, url string
		cred      map[string]string
		secret    string
	}{
		{"token", tokenURL, map[string]string{memberToken: "wrong-token-5e3b9"}, "wrong-token-5e3b9"},
		{"user and password", userURL, map[string]string{memberUser: "app", memberPassword: "wrong-password-d41c"}, "wrong-password-d41c"},
		{"password in the url", strings.Replace(userURL, "nats://", "nats://app:url-password-9f0e@", 1), nil, "url-password-9f0e"},
		{"token in the url", strings.Replace(tokenURL, "nats://", "nats://url-token-aa91@", 1), nil, "url-token-aa91"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := openOn(t, c.url, set, c.cred)
			if err == nil {
				t.Fatal("a wrong credential connected")
			}
			if strings.Contains(err.Error(), c.secret) || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
				t.Fatalf("error %q: want an authorization error without the secret", err)
			}
		})
	}
	// The right ones sign in (the stream is missing: that is the error).
	if _, err := openOn(t, tokenURL, set, map[string]string{memberToken: "right-token-8c1f"}); err == nil || !strings.Contains(err.Error(), "no stream") {
		t.Fatalf("the right token: %v", err)
	}
	if _, err := openOn(t, userURL, set, map[string]string{memberUser: "app", memberPassword: "right-password-77a2"}); err == nil || !strings.Contains(err.Error(), "no stream") {
		t.Fatalf("the right password: %v", err)
	}
	// A creds file that is not there is named as the problem.
	_, err := openOn(t, tokenURL, set, map[string]string{memberCreds: filepath.Join(t.TempDir(), "absent.creds")})
	if err == nil || !strings.Contains(err.Error(), "absent.creds") {
		t.Fatalf("a missing creds file: %v", err)
	}
}

func TestCredentialAndSettingsErrors(t *testing.T) {
	for _, c := range []struct {
		members map[string]string
		want    string
	}{
		{map[string]string{}, "url is empty"},
		{map[string]string{memberURL: "http://h:4222"}, "not nats:// or tls://"},
		{map[string]string{memberURL: "nats://h:4222", memberToken: "t0k-secret", memberUser: "u", memberPassword: "p4ss-secret"}, "more than one way"},
		{map[string]string{memberURL: "nats://u:p4ss-secret@h:4222", memberToken: "t0k-secret"}, "more than one way"},
		{map[string]string{memberURL: "nats://h:4222", memberPassword: "p4ss-secret"}, "give both"},
	} {
		_, err := CredentialOf(c.members)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.members, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error quotes a secret: %v", err)
		}
	}
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{settingConsumer: "c"}, "setting stream is empty"},
		{map[string]any{settingStream: "a.b", settingConsumer: "c"}, "not a JetStream name"},
		{map[string]any{settingStream: "s", settingConsumer: "c", settingNakDelay: "0s"}, "longer than 0"},
		{map[string]any{settingStream: "s", settingConsumer: "c", settingMaxDeliver: int64(-2)}, "1 or more"},
	} {
		if _, err := SettingsOf(c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
}

// dev's stand-in: Wire makes the connection's stream and consumer on the
// embedded server and points its URL there; Send publishes what dev types,
// which the driver then receives.
func TestStandInWiresAndSends(t *testing.T) {
	si, err := Driver.StandIn()
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	lit := func(v any) []byte { b, _ := json.Marshal(v); return b }
	c := irConnection("orders", lit)
	w, err := si.Wire(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Credential[memberURL], "nats://127.0.0.1:") || w.Settings[settingConsumer] != "orders_jadpo" {
		t.Fatalf("wiring %+v", w)
	}
	if ok, err := si.Send(context.Background(), "orders", `{"id":"typed"}`); !ok || err != nil {
		t.Fatalf("send: %v %v", ok, err)
	}
	if ok, _ := si.Send(context.Background(), "other", "x"); ok {
		t.Fatal("a connection it did not wire took a message")
	}
	src, err := openOn(t, w.Credential[memberURL], map[string]any{settingStream: "ORDERS", settingConsumer: w.Settings[settingConsumer]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := src.Receive(ctx)
	if err != nil || len(b.Messages) != 1 || b.Messages[0].Body != `{"id":"typed"}` {
		t.Fatalf("received %v %+v", err, b)
	}
	if !strings.Contains(si.Describe(), "embedded") || strings.Join(si.Queues(), ",") != "orders" {
		t.Fatalf("describe %q queues %v", si.Describe(), si.Queues())
	}
}

// irConnection is a connection as dev's plan holds it: the stream
// written literally, the consumer from config.
func irConnection(name string, lit func(any) []byte) *ir.Connection {
	return &ir.Connection{Name: name, Credential: map[string]ir.Value{memberURL: {Config: "nats_url"}},
		Settings: map[string]ir.Value{settingStream: {Literal: lit("ORDERS")}, settingConsumer: {Config: "nats_consumer"},
			settingSubject: {Literal: lit("orders.>")}, settingNakDelay: {Literal: lit("5s")}, settingCreate: {Literal: lit(false)}}}
}

// A creds file (a user JWT and its seed) signs in to a server in operator
// mode; one of an account the server does not trust is refused.
func TestCredsFileSignsIn(t *testing.T) {
	okp, _ := nkeys.CreateOperator()
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	if _, err := oc.Encode(okp); err != nil {
		t.Fatal(err)
	}
	account := func(signer nkeys.KeyPair) (string, string) {
		akp, _ := nkeys.CreateAccount()
		apub, _ := akp.PublicKey()
		ajwt, err := jwt.NewAccountClaims(apub).Encode(signer)
		if err != nil {
			t.Fatal(err)
		}
		ukp, _ := nkeys.CreateUser()
		upub, _ := ukp.PublicKey()
		ujwt, err := jwt.NewUserClaims(upub).Encode(akp)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := ukp.Seed()
		creds, err := jwt.FormatUserConfig(ujwt, seed)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "user.creds")
		if err := os.WriteFile(path, creds, 0o600); err != nil {
			t.Fatal(err)
		}
		return apub + "\x00" + ajwt, path
	}
	trusted, goodCreds := account(okp)
	other, _ := nkeys.CreateOperator()
	_, badCreds := account(other)
	resolver := &server.MemAccResolver{}
	apub, ajwt, _ := strings.Cut(trusted, "\x00")
	if err := resolver.Store(apub, ajwt); err != nil {
		t.Fatal(err)
	}
	o := &server.Options{TrustedOperators: []*jwt.OperatorClaims{oc}, AccountResolver: resolver}
	o.Host, o.Port, o.NoLog, o.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, true
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	set := map[string]any{settingStream: "s", settingConsumer: "c"}
	// Signed in: the account has no JetStream, and that is what is said.
	if _, err := openOn(t, srv.ClientURL(), set, map[string]string{memberCreds: goodCreds}); err == nil || !strings.Contains(err.Error(), "no JetStream request for this account") {
		t.Fatalf("the trusted creds: %v", err)
	}
	if _, err := openOn(t, srv.ClientURL(), set, map[string]string{memberCreds: badCreds}); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("creds of an account the server does not trust: %v", err)
	}
}

// A message handed back (the store could not take it) is naked with
// nak_delay: not delivered again before it, delivered after.
func TestHandedBackWithTheNakDelay(t *testing.T) {
	u, _, js := admin(t)
	name := unique("nak_")
	subject := testStream(t, js, name, jetstream.LimitsPolicy)
	src, err := openOn(t, u, map[string]any{settingStream: name, settingConsumer: "c", settingCreate: true, settingNakDelay: "5s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(context.Background(), subject, []byte(`{"id":"later"}`)); err != nil {
		t.Fatal(err)
	}
	receive := func(d time.Duration) *queue.Batch {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		b, err := src.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := receive(10 * time.Second)
	if len(b.Messages) != 1 {
		t.Fatalf("received %d", len(b.Messages))
	}
	src.Acknowledge(context.Background(), b) // not settled: naked with 5s
	if again := receive(time.Second); len(again.Messages) != 0 {
		t.Fatal("a message naked with a 5s delay came back within a second")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if again := receive(10 * time.Second); len(again.Messages) == 1 {
			again.Messages[0].Settled = true
			src.Acknowledge(context.Background(), again)
			return
		}
	}
	t.Fatal("the naked message never came back")
}

// A waiting pull whose expiry answer is late (the machine loaded: here the
// answers held back from the moment the waiting pull is sent) ends with
// the receive's context as an empty batch, not an error: the no-wait pull
// before it was answered, so the consumer is there and empty.
func TestALateExpiryIsAnEmptyBatch(t *testing.T) {
	u, _, js := admin(t)
	name := unique("late_")
	testStream(t, js, name, jetstream.LimitsPolicy)
	var pulls atomic.Int32
	ses := &session{}
	hook := func(f *freezable, p []byte) {
		// The second pull request of the receive is the waiting one.
		if n := bytes.Count(p, []byte("$JS.API.CONSUMER.MSG.NEXT.")); n > 0 && pulls.Add(int32(n)) >= 2 {
			f.freeze(5 * time.Second)
		}
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := ses.dial(ctx, network, addr)
		if err == nil {
			c.(*freezable).onWrite = hook
		}
		return c, err
	}
	conn := &queue.Conn{Name: "jobs", Settings: map[string]any{settingStream: name, settingConsumer: "c", settingCreate: true},
		Credentials: map[string]string{memberURL: u}}
	src, err := Driver.Open(conn, queue.Options{Queue: "jobs", MaxBatch: 10, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pulls.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b, err := src.Receive(ctx)
	if err != nil || len(b.Messages) != 0 {
		t.Fatalf("a late expiry: %v, %+v", err, b)
	}
	if pulls.Load() < 2 {
		t.Fatalf("%d pull requests: the waiting pull was never sent", pulls.Load())
	}
}
