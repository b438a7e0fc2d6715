package natsjs

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// Driver is the nats_jetstream driver (providers.Drivers registers it).
// `jadpo dev` runs it against a NATS server with JetStream embedded in the
// process, its store in a temporary folder.
var Driver = queue.Driver{Contract: contract, Open: Open, StandIn: startStandIn}

// standIn is the driver's stand-in for `jadpo dev`: an embedded NATS
// server with JetStream, a stream and durable pull consumer on it for each
// connection.
type standIn struct {
	srv *server.Server
	dir string
	nc  *nats.Conn
	js  jetstream.JetStream

	mu       sync.Mutex
	subjects map[string]string // by connection: the subject its stream holds
}

func startStandIn() (queue.StandIn, error) {
	dir, err := os.MkdirTemp("", "jadpo-dev-nats-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the embedded NATS server's folder: %w", err)
	}
	s := &standIn{dir: dir, subjects: map[string]string{}}
	s.srv, err = server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true, DisableJetStreamBanner: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot start the embedded NATS server: %w", err)
	}
	s.srv.Start()
	if !s.srv.ReadyForConnections(10 * time.Second) {
		s.Close()
		return nil, fmt.Errorf("the embedded NATS server did not start within 10s")
	}
	if s.nc, err = nats.Connect(s.srv.ClientURL(), nats.Name("jadpo dev")); err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot connect to the embedded NATS server: %w", err)
	}
	if s.js, err = jetstream.New(s.nc); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

var notName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// Wire creates the connection's stream and consumer on the embedded
// server (the names its settings give literally, or ones of the
// connection's name for those from config) and points its URL there.
func (s *standIn) Wire(c *ir.Connection) (queue.Wiring, error) {
	// The embedded server asks no sign-in, and takes any: a token, user or
	// password the connection gives is set to a dev one; a creds file is
	// read as it is.
	w := queue.Wiring{Credential: map[string]string{memberURL: s.srv.ClientURL(), memberToken: "dev-token", memberUser: "dev", memberPassword: "dev-password"},
		Settings: map[string]string{}}
	values := map[string]any{}
	base := notName.ReplaceAllString(c.Name, "_")
	defaults := map[string]string{settingStream: base, settingConsumer: base + "_jadpo", settingSubject: "dev." + base}
	for name, v := range c.Settings {
		switch {
		case v.Literal != nil:
			val, err := ir.DecodeLiteral(v.Literal)
			if err != nil {
				return w, fmt.Errorf("connection %s: setting %s: %w", c.Name, name, err)
			}
			values[name] = val
		case v.Config != "" && defaults[name] != "":
			values[name] = defaults[name]
			w.Settings[name] = defaults[name]
		}
	}
	for name, d := range defaults {
		if s, _ := values[name].(string); s == "" {
			values[name] = d
		}
	}
	set, err := SettingsOf(values)
	if err != nil {
		return w, fmt.Errorf("connection %s: %w", c.Name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: set.Stream, Subjects: []string{set.Subject}, Storage: jetstream.FileStorage})
	if err != nil {
		return w, fmt.Errorf("connection %s: cannot create stream %s on the embedded NATS server: %w", c.Name, set.Stream, err)
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, ConsumerConfig(set)); err != nil {
		return w, fmt.Errorf("connection %s: cannot create consumer %s on the embedded NATS server: %w", c.Name, set.Consumer, err)
	}
	// Typed input goes to a subject the stream holds: a filter's
	// wildcards made a token.
	send := strings.NewReplacer("*", "dev", ">", "dev").Replace(set.Subject)
	s.mu.Lock()
	s.subjects[c.Name] = send
	s.mu.Unlock()
	return w, nil
}

// Send publishes body to the connection's stream, waiting for JetStream's
// acknowledgement.
func (s *standIn) Send(ctx context.Context, conn, body string) (bool, error) {
	s.mu.Lock()
	subject, ok := s.subjects[conn]
	s.mu.Unlock()
	if !ok {
		return false, nil
	}
	_, err := s.js.Publish(ctx, subject, []byte(body))
	return true, err
}

func (s *standIn) Queues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.subjects))
	for q := range s.subjects {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

func (s *standIn) Describe() string {
	return "NATS server with JetStream (embedded) on " + s.srv.ClientURL()
}

func (s *standIn) Close() {
	if s.nc != nil {
		s.nc.Close()
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	os.RemoveAll(s.dir)
}
