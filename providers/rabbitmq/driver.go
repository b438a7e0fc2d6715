// Package rabbitmq is the rabbitmq queue driver: it receives from a queue
// of a RabbitMQ broker over AMQP 0-9-1 (github.com/rabbitmq/amqp091-go),
// with manual acknowledgements (docs/guide/receiving.md, "RabbitMQ").
package rabbitmq

import (
	"fmt"
	"net"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// name is the driver's name (`provide receiving { driver: rabbitmq }`).
const name ir.Driver = "rabbitmq"

// Protocol is the protocol the driver's provider speaks: AMQP 0-9-1, which
// the driver reaches itself (no operations, no host).
const Protocol ir.Protocol = "amqp"

// Scheme is the driver's credential scheme: the broker's URL
// (amqp://user:password@host:port/vhost, or amqps:// for TLS), secret as it
// holds the password.
const Scheme ir.CredentialScheme = "amqp_url"

// Driver is the rabbitmq driver (providers.Drivers registers it). dev runs
// it against a broker on this machine, its credential's url: RabbitMQ has
// no in-process stand-in.
var Driver = queue.Driver{Contract: contract, Open: Open, LocalURL: ir.MemberURL, RemoteHost: RemoteHost, LocalSend: Send,
	LocalWhat: "broker", LocalFix: "a RabbitMQ broker on this machine (amqp://guest:guest@127.0.0.1:5672/)"}

// The settings the driver reads (docs/guide/receiving.md, "RabbitMQ").
const (
	settingQueue   = "queue"
	settingDeclare = "declare"
)

// Declare is how the driver finds its queue at start.
type Declare string

const (
	// DeclareExisting: the queue must exist already (passive declare); its type,
	// dead-letter exchange and delivery limit are the broker's (arguments or
	// a policy).
	DeclareExisting Declare = "existing"
	// DeclareClassic and DeclareQuorum declare a durable queue of that type
	// (nothing happens when it exists as such).
	DeclareClassic Declare = "classic"
	DeclareQuorum  Declare = "quorum"
)

var contract = ir.DriverContract{
	Name:        name,
	Help:        "declare the provider, credential and settings as the catalogue's RabbitMq.v1 does (`jadpo package add RabbitMq.v1`)",
	Protocol:    Protocol,
	ProtocolWhy: "speaks AMQP 0-9-1 to a RabbitMQ broker",
	NoHost:      "its broker is the credential's `url`",
	NoHostHelp:  "remove host, and give credential: { url: config.<broker url> }",
	Schemes: []ir.DriverScheme{{Name: Scheme, Members: []ir.CredentialMember{
		{Name: ir.MemberURL, Secret: true, Required: true}}}},
	Settings: []ir.DriverSetting{
		{Name: settingQueue, Kind: ir.Text, Required: true},
		{Name: settingDeclare, Kind: ir.Enum, Declared: true, Variants: []string{string(DeclareExisting), string(DeclareClassic), string(DeclareQuorum)},
			As: "one of existing, classic and quorum"},
	},
}

// Settings are what the driver reads of a connection's settings.
type Settings struct {
	Queue   string
	Declare Declare
}

// SettingsOf reads a rabbitmq connection's settings (their values resolved).
func SettingsOf(settings map[string]any) (Settings, error) {
	str := func(name string) string { s, _ := settings[name].(string); return s }
	s := Settings{Queue: str(settingQueue), Declare: Declare(str(settingDeclare))}
	if s.Queue == "" {
		return s, fmt.Errorf("setting queue is empty: name the broker's queue to receive from")
	}
	if len(s.Queue) > 255 {
		return s, fmt.Errorf("setting queue is %d bytes long: AMQP names a queue in at most 255", len(s.Queue))
	}
	switch s.Declare {
	case "":
		s.Declare = DeclareExisting
	case DeclareExisting, DeclareClassic, DeclareQuorum:
	default:
		return s, fmt.Errorf("setting declare: %q is not one of existing, classic and quorum", s.Declare)
	}
	return s, nil
}

// parseURL reads a broker URL as the client dials it; an error says only
// what is wrong, never quoting the URL (it holds a password).
func parseURL(rawURL string) (amqp.URI, error) {
	scheme, _, _ := strings.Cut(rawURL, "://")
	switch strings.ToLower(scheme) {
	case "amqp", "amqps":
	default:
		return amqp.URI{}, fmt.Errorf("not an AMQP URL: write amqp://user:password@host:5672/vhost (amqps:// for TLS)")
	}
	u, err := amqp.ParseURI(rawURL)
	if err != nil {
		return amqp.URI{}, fmt.Errorf("not an AMQP URL (amqp://user:password@host:5672/vhost, a password's reserved characters percent-encoded)")
	}
	return u, nil
}

// RemoteHost returns the broker URL's host when it is not on this machine,
// "" when it is (localhost, a loopback address), read as the client reads
// the URL.
func RemoteHost(rawURL string) (string, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return "", err
	}
	if loopback(u.Host) {
		return "", nil
	}
	return u.Host, nil
}

func loopback(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
