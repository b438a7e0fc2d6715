package redisstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// Name is the driver's name (`provide receiving { driver: redis_streams }`).
const Name ir.Driver = "redis_streams"

// Protocol is the protocol its provider speaks: Redis's own, which the
// driver reaches itself (the runtime makes no wire client for it).
const Protocol ir.Protocol = "redis"

// Scheme is its credential scheme: the server's URL, a secret (it holds
// the password).
const Scheme ir.CredentialScheme = "redis_url"

// Driver is the redis_streams driver (providers.Drivers registers it).
// dev runs it against miniredis, in process.
var Driver = queue.Driver{Contract: contract, Open: Open, StandIn: startStandIn}

// contract is the driver's contract (docs/guide/receiving.md, "Redis
// Streams"): a provider of protocol redis with the redis_url credential,
// and the settings the driver reads.
var contract = ir.DriverContract{
	Name:        Name,
	Help:        "declare the provider and settings as the catalogue's RedisStreams.v1 does (`jadpo package add RedisStreams.v1`)",
	Protocol:    Protocol,
	ProtocolWhy: "reads a Redis stream through a consumer group",
	NoHost:      "its server is the credential's `url`",
	NoHostHelp:  "remove host, and give credential: { url: config.<redis url> }",
	Schemes:     []ir.DriverScheme{{Name: Scheme, Members: []ir.CredentialMember{{Name: ir.MemberURL, Secret: true, Required: true}}}},
	Settings: []ir.DriverSetting{
		{Name: settingStream, Kind: ir.Text, Required: true}, {Name: settingGroup, Kind: ir.Text, Required: true},
		{Name: settingCreateGroup, Kind: ir.Bool}, {Name: settingField, Kind: ir.Text},
		{Name: settingClaimIdle, Kind: ir.Duration}, {Name: settingMaxDeliveries, Kind: ir.Int},
		{Name: settingBlock, Kind: ir.Duration},
	},
}

// standIn is the driver's stand-in for `jadpo dev`: a miniredis server on
// this machine, the stream and group of each connection made on it.
type standIn struct {
	srv    *miniredis.Miniredis
	client *redis.Client
	mu     sync.Mutex
	// streams are the stream keys by connection, and their fields.
	streams map[string]devStream
}

type devStream struct{ key, field string }

func startStandIn() (queue.StandIn, error) {
	srv := miniredis.NewMiniRedis()
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("cannot start the Redis stand-in (miniredis): %w", err)
	}
	return &standIn{srv: srv, client: redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2, DisableIdentity: true}),
		streams: map[string]devStream{}}, nil
}

// URL is the stand-in's URL.
func (s *standIn) URL() string { return "redis://" + s.srv.Addr() + "/0" }

// Wire points the connection's url at the stand-in and makes its stream
// and group there: a stream or group written as config is named after the
// connection, a literal one is used as it is.
func (s *standIn) Wire(c *ir.Connection) (queue.Wiring, error) {
	w := queue.Wiring{Credential: map[string]string{ir.MemberURL: s.URL()}, Settings: map[string]string{}}
	vals := map[string]string{settingStream: c.Name, settingGroup: "jadpo", settingField: DefaultField}
	for _, name := range []string{settingStream, settingGroup, settingField} {
		v, ok := c.Settings[name]
		switch {
		case !ok:
		case v.Config != "":
			if name != settingField {
				w.Settings[name] = vals[name]
			}
		case v.Literal != nil:
			var t string
			if err := json.Unmarshal(v.Literal, &t); err != nil {
				return w, fmt.Errorf("connection %s: setting %s: %w", c.Name, name, err)
			}
			vals[name] = t
		}
	}
	ctx := context.Background()
	if err := s.client.XGroupCreateMkStream(ctx, vals[settingStream], vals[settingGroup], "0").Err(); err != nil &&
		!strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return w, fmt.Errorf("connection %s: making its stream on the Redis stand-in: %w", c.Name, err)
	}
	s.mu.Lock()
	s.streams[c.Name] = devStream{key: vals[settingStream], field: vals[settingField]}
	s.mu.Unlock()
	return w, nil
}

// Send adds body to the connection's stream as its body field (XADD).
func (s *standIn) Send(ctx context.Context, conn, body string) (bool, error) {
	s.mu.Lock()
	st, ok := s.streams[conn]
	s.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, s.client.XAdd(ctx, &redis.XAddArgs{Stream: st.key, Values: []any{st.field, body}}).Err()
}

func (s *standIn) Queues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.streams))
	for q := range s.streams {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

func (s *standIn) Describe() string { return "Redis stand-in (miniredis) on " + s.URL() }

func (s *standIn) Close() {
	s.client.Close()
	s.srv.Close()
}
