package queue

import (
	"context"
	"net"

	"github.com/jadpo/jadpo/check/ir"
)

// Driver is one queue driver as a value: everything the toolchain knows of
// it, exported by its package (cfqueues.Driver, sqlinbox.Driver,
// receiving.Driver) and registered once, in providers.Drivers, which the
// commands hand to the checker (the contracts, with the project) and the
// runtime and `jadpo dev` read. Adding a driver is its folder, that one
// line and its catalogue package (docs/design/architecture.md, "Adding a
// queue driver").
type Driver struct {
	// Contract is what the driver asks of the package that names it; its
	// Name is the driver's (`provide receiving { driver: <name> }`; "" for
	// a package's own receive/acknowledge mapping).
	Contract ir.DriverContract
	// Open opens the driver's Source for one queue of a connection.
	Open Opener
	// StandIn starts the driver's local stand-in for `jadpo dev`, once, on
	// the first connection dev points at it; nil when the driver has none of
	// its own (LocalURL, or a package mapping whose provider dev knows).
	StandIn func() (StandIn, error)
	// LocalURL, without a StandIn, is the credential member holding the URL
	// of the server dev runs the driver against: it must be on this machine
	// (a SQL inbox's database), and dev refuses another host, naming it.
	LocalURL string
	// RemoteHost, with LocalURL, is the first host of such a URL that is not
	// on this machine ("" when every one is), or what is wrong with the URL,
	// never quoting it (it may hold a password).
	RemoteHost func(rawURL string) (string, error)
	// LocalWhat names the server in dev's refusal ("its database is on
	// ..."); LocalFix says what to set the URL to, after "set VAR to ".
	LocalWhat, LocalFix string
	// LocalSend, with LocalURL, puts body (dev's typed input) on conn's
	// queue on that server, dialling with dial (dev's, which stays on this
	// machine); nil when dev sends to it its own way (a SQL inbox's row).
	LocalSend func(ctx context.Context, conn *Conn, dial func(ctx context.Context, network, addr string) (net.Conn, error), body string) error
}

// Name is the driver's name.
func (d *Driver) Name() ir.Driver { return d.Contract.Name }

// StandIn is a driver's local stand-in for `jadpo dev`: a fake of its
// service on this machine that the app's connections are pointed at.
type StandIn interface {
	// Wire readies the stand-in for connection c (creating its queue) and
	// says what of c to point at it.
	Wire(c *ir.Connection) (Wiring, error)
	// Send puts body on the queue of the app's connection conn (dev's typed
	// input); false when conn is not one it wired.
	Send(ctx context.Context, conn, body string) (bool, error)
	// Queues are the connections it wired, for Send.
	Queues() []string
	// Describe names the stand-in for dev's first lines ("Cloudflare Queues
	// fake on http://127.0.0.1:8080").
	Describe() string
	Close()
}

// Wiring is what of a connection dev points at a stand-in; each value
// written as config is set in the app's environment, each literal one
// replaced in dev's plan.
type Wiring struct {
	// Host is the connection's host ("" leaves it).
	Host string
	// Credential are the credential members' values, for the members the
	// connection writes.
	Credential map[string]string
	// Settings are settings' values, for the settings the connection
	// writes.
	Settings map[string]string
}
