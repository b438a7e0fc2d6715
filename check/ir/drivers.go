package ir

// A queue driver's contract, as data: what a built-in receiving driver
// (`provide receiving { driver: <name> }`) asks of the package that names
// it. Each driver's package states its own (providers/queue.Driver's
// Contract); the commands hand the drivers' contracts to the checker with
// the project (project.Project.Drivers, set beside its Catalogue), and the
// checker holds every package to its driver's contract by one path
// (check/drivers.go). A driver's own rules for a connection's settings are
// functions of the settings (Check, Body), so the checker applies the very
// rules the driver's start does. ir holds the types because both sides
// read them and ir imports nothing of either.

// DriverContract is one driver's contract.
type DriverContract struct {
	Name Driver
	// Help says where the contract is met, for the diagnostics (the
	// catalogue package that meets it).
	Help string
	// Protocol, when set, is the protocol the package's provider must
	// speak; ProtocolWhy says why, after "the `<driver>` driver " ("reads a
	// table of a SQL database").
	Protocol    Protocol
	ProtocolWhy string
	// NoHost, with Protocol, says why a connection of that protocol takes no
	// `host:` (after "takes no `host`: "; a SQL database is its credential's
	// url), and NoHostHelp how to fix one that gives it; "" when it takes
	// one as an HTTP service does.
	NoHost, NoHostHelp string
	// Schemes are credential schemes the driver brings for its own
	// protocol (a broker's URL, token or user and password), beside the
	// built-in CredentialSchemes: a package may name them as it names those.
	Schemes []DriverScheme
	// Settings are the settings the driver reads.
	Settings []DriverSetting
	// Receive and Acknowledge are the operations the driver calls, nil for
	// none (a SQL inbox calls none): the checker fills the plan's calls from
	// them.
	Receive, Acknowledge *DriverCall
	// Check, when set, holds a connection's settings to the driver's own
	// rules that need no server (a SQL inbox's claim form and columns): the
	// function its start applies too, so check and start never disagree.
	// The checker shows each problem at its setting.
	Check func(ConnectionSettings) []SettingProblem
	// Body, when set, names the members at the top of every body the
	// driver hands on, as the settings say (a SQL inbox's default fetch: the
	// columns it selects); false when they leave it open (a fetch of the
	// app's own, a column named by a config field). The checker holds each
	// listed event's required fields to them.
	Body func(ConnectionSettings) (DriverBody, bool)
}

// ConnectionSettings are a connection's settings as the checker knows them.
type ConnectionSettings struct {
	// Values are the settings given a literal or defaulted, resolved as
	// the runtime resolves them (DecodeLiteral: an enum's variant and a
	// duration are their text).
	Values map[string]any
	// Open are the settings given a config field: their values are known
	// only at start, and a rule reading one is left to the start.
	Open map[string]bool
}

// DriverBody is what every body a driver hands on holds at its top.
type DriverBody struct {
	Members []string
	// Reader is what reads them, for the diagnostics ("the SQL inbox's
	// default fetch"), and Setting the setting that names more of them, a
	// comma-separated list: where a missing one is shown, and added.
	Reader, Setting string
}

// SettingProblem is a mistake in a connection's settings: the setting it
// is shown at, what is wrong, and how to fix it.
type SettingProblem struct {
	Setting, Message, Help string
}

// DriverSetting is a setting a driver reads.
type DriverSetting struct {
	Name string
	Kind Kind
	// Required: the package must declare it, not optional. Declared: the
	// package must declare it, optional or not.
	Required, Declared bool
	// Variants are the variants an Enum setting must hold; As says how the
	// driver reads it, for the diagnostic ("one of row_lock, lease and
	// advisory_lock").
	Variants []string
	As       string
}

// DriverCall is an operation a driver calls and the members it needs.
type DriverCall struct {
	Operation     string
	Input, Output []DriverMember
	// Fixed are the call's inputs the plan gives every call (literals).
	Fixed map[string]Value
	// FromSettings are inputs given the package's setting of the same name,
	// when it declares one of that input member's kind.
	FromSettings []string
}

// DriverMember is a member a driver reads or writes: a dotted path through
// records (a list of records is stepped through as its element, written
// `messages[]`) and the kind at its end.
type DriverMember struct {
	Path string
	Kind Kind
}

// DriverScheme is a credential scheme a driver brings: its name and its
// members, in the order they are written.
type DriverScheme struct {
	Name    CredentialScheme
	Members []CredentialMember
}
