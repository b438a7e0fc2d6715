package natsjs

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jadpo/jadpo/check/ir"
)

// Name is the driver's name (`provide receiving { driver: nats_jetstream }`).
const Name ir.Driver = "nats_jetstream"

// Protocol is the NATS client protocol, this driver's own: the runtime
// makes no wire client for it.
const Protocol ir.Protocol = "nats"

// Scheme is the driver's credential scheme: the server's URL and, at most
// one of, a token, a user and password, or a creds file (a JWT and its
// NKey seed, as `nsc` writes it).
const Scheme ir.CredentialScheme = "nats"

// The credential's members.
const (
	memberURL      = "url"
	memberToken    = "token"
	memberUser     = "user"
	memberPassword = "password"
	memberCreds    = "creds"
)

// The settings the driver reads (docs/guide/receiving.md, "NATS JetStream").
const (
	settingStream     = "stream"
	settingConsumer   = "consumer"
	settingCreate     = "create_consumer"
	settingSubject    = "subject"
	settingAckWait    = "ack_wait"
	settingMaxDeliver = "max_deliver"
	settingNakDelay   = "nak_delay"
)

var contract = ir.DriverContract{
	Name:        Name,
	Help:        "declare the provider and settings as the catalogue's NatsJetStream.v1 does (`jadpo package add NatsJetStream.v1`)",
	Protocol:    Protocol,
	ProtocolWhy: "pulls from a JetStream consumer over the NATS protocol",
	NoHost:      "its server is the credential's `url`",
	NoHostHelp:  "remove host, and give credential: { url: config.<nats url> }",
	Schemes: []ir.DriverScheme{{Name: Scheme, Members: []ir.CredentialMember{
		// The URL is secret as a database URL is: it may hold a user and
		// password or a token.
		{Name: memberURL, Secret: true, Required: true},
		{Name: memberToken, Secret: true},
		{Name: memberUser},
		{Name: memberPassword, Secret: true},
		{Name: memberCreds},
	}}},
	Settings: []ir.DriverSetting{
		{Name: settingStream, Kind: ir.Text, Required: true},
		{Name: settingConsumer, Kind: ir.Text, Required: true},
		{Name: settingCreate, Kind: ir.Bool},
		{Name: settingSubject, Kind: ir.Text},
		{Name: settingAckWait, Kind: ir.Duration},
		{Name: settingMaxDeliver, Kind: ir.Int},
		{Name: settingNakDelay, Kind: ir.Duration},
	},
}

// DefaultNakDelay is how long a message handed back waits before JetStream
// delivers it again, without a nak_delay setting.
const DefaultNakDelay = 5 * time.Second

// Settings are a connection's settings, read.
type Settings struct {
	Stream, Consumer string
	// Create makes the durable pull consumer when the stream lacks it.
	Create bool
	// Subject, AckWait and MaxDeliver are the created consumer's filter
	// subject, ack wait and delivery limit (0: JetStream's: none, 30s,
	// unlimited).
	Subject    string
	AckWait    time.Duration
	MaxDeliver int
	// NakDelay is the delay a message handed back is naked with.
	NakDelay time.Duration
}

// SettingsOf reads a nats_jetstream connection's settings (values
// resolved: text, bool, int, duration text).
func SettingsOf(values map[string]any) (Settings, error) {
	s := Settings{NakDelay: DefaultNakDelay}
	text := func(name string) string { v, _ := values[name].(string); return strings.TrimSpace(v) }
	s.Stream, s.Consumer, s.Subject = text(settingStream), text(settingConsumer), text(settingSubject)
	for _, n := range [][2]string{{settingStream, s.Stream}, {settingConsumer, s.Consumer}} {
		if n[1] == "" {
			return s, fmt.Errorf("setting %s is empty: name the JetStream %s", n[0], n[0])
		}
		if strings.ContainsAny(n[1], ". *>/\\\t") {
			return s, fmt.Errorf("setting %s: %q is not a JetStream name: a name holds no spaces, dots, `*`, `>` or slashes", n[0], n[1])
		}
	}
	switch v := values[settingCreate].(type) {
	case nil:
	case bool:
		s.Create = v
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("setting %s: %q is not true or false", settingCreate, v)
		}
		s.Create = b
	default:
		return s, fmt.Errorf("setting %s is not true or false", settingCreate)
	}
	var err error
	if s.AckWait, err = duration(values, settingAckWait); err != nil {
		return s, err
	}
	if d, err := duration(values, settingNakDelay); err != nil {
		return s, err
	} else if d > 0 {
		s.NakDelay = d
	}
	switch v := values[settingMaxDeliver].(type) {
	case nil:
	case int64:
		s.MaxDeliver = int(v)
	case int:
		s.MaxDeliver = v
	case float64:
		s.MaxDeliver = int(v)
	case json.Number, string:
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil {
			return s, fmt.Errorf("setting %s: %q is not a whole number", settingMaxDeliver, v)
		}
		s.MaxDeliver = n
	default:
		return s, fmt.Errorf("setting %s is not a whole number", settingMaxDeliver)
	}
	if s.MaxDeliver < 0 {
		return s, fmt.Errorf("setting %s: %d: write how many deliveries a message gets (1 or more), or leave it out for no limit", settingMaxDeliver, s.MaxDeliver)
	}
	return s, nil
}

func duration(values map[string]any, name string) (time.Duration, error) {
	v, ok := values[name]
	if !ok || v == nil {
		return 0, nil
	}
	str, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("setting %s is not a duration: write one such as `30s`", name)
	}
	if str == "" {
		return 0, nil
	}
	d, err := ir.ParseDuration(str)
	if err != nil {
		return 0, fmt.Errorf("setting %s: %w", name, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("setting %s: %q: write a duration longer than 0, such as `30s`", name, str)
	}
	return d, nil
}

// Credential is a connection's credential, read.
type Credential struct {
	URL                   string
	Token, User, Password string
	Creds                 string
}

// CredentialOf reads the credential's members. Its errors never quote a
// member (the URL may hold a password).
func CredentialOf(members map[string]string) (Credential, error) {
	c := Credential{URL: strings.TrimSpace(members[memberURL]), Token: members[memberToken], User: members[memberUser],
		Password: members[memberPassword], Creds: strings.TrimSpace(members[memberCreds])}
	if c.URL == "" {
		return c, fmt.Errorf("the credential's url is empty: give the NATS server's URL, such as nats://127.0.0.1:4222")
	}
	userinfo := false
	for _, one := range strings.Split(c.URL, ",") {
		one = strings.TrimSpace(one)
		u, err := url.Parse(one)
		if err != nil || u.Host == "" {
			return c, fmt.Errorf("the credential's url is not a NATS URL: write nats://HOST:PORT (tls://HOST:PORT for TLS), several comma-separated")
		}
		switch strings.ToLower(u.Scheme) {
		case "nats", "tls":
		default:
			return c, fmt.Errorf("the credential's url is not nats:// or tls://: write nats://HOST:PORT, or tls://HOST:PORT for TLS")
		}
		if u.User != nil {
			userinfo = true
		}
	}
	ways := 0
	for _, set := range []bool{c.Token != "", c.User != "" || c.Password != "", c.Creds != "", userinfo} {
		if set {
			ways++
		}
	}
	if ways > 1 {
		return c, fmt.Errorf("the credential gives more than one way to sign in (of token, user and password, creds and a user in the url): give one")
	}
	if (c.User == "") != (c.Password == "") {
		return c, fmt.Errorf("the credential gives a user without a password or a password without a user: give both")
	}
	return c, nil
}

// secrets are the values an error or log line must never hold.
func (c Credential) secrets() []string {
	var out []string
	for _, s := range []string{c.URL, c.Token, c.Password} {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, one := range strings.Split(c.URL, ",") {
		if u, err := url.Parse(strings.TrimSpace(one)); err == nil && u.User != nil {
			out = append(out, u.User.Username())
			if p, ok := u.User.Password(); ok && p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// hosts are the URL's hosts, for messages.
func (c Credential) hosts() string {
	var hs []string
	for _, one := range strings.Split(c.URL, ",") {
		if u, err := url.Parse(strings.TrimSpace(one)); err == nil {
			hs = append(hs, u.Host)
		}
	}
	return strings.Join(hs, ",")
}
