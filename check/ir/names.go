package ir

// The plan's names for how a package reaches its service: its protocol,
// its credential scheme and its receiving driver. They are written here
// once; the checker accepts them, the plan carries them and the runtime and
// providers pick their wire code by them.

// Protocol is a provider's protocol (`protocol: Protocol.<name>`).
type Protocol string

const (
	ProtocolAWSJSON  Protocol = "aws_json"  // AWS's JSON 1.0 protocol (X-Amz-Target)
	ProtocolJSONHTTP Protocol = "json_http" // JSON over HTTP: a method and path per operation
	// ProtocolSQL is the SQL inbox's: no operations, a database reached
	// through the database_url credential; only the sql_inbox driver uses it.
	ProtocolSQL Protocol = "sql"
)

// Protocols are the protocols a package may name, in the order diagnostics list them.
var Protocols = []Protocol{ProtocolAWSJSON, ProtocolJSONHTTP, ProtocolSQL}

// CredentialScheme is how a provider's requests are signed
// (`credential: CredentialScheme.<name>`); "" means none.
type CredentialScheme string

const (
	CredentialAWSSigV4    CredentialScheme = "aws_sigv4"
	CredentialBearer      CredentialScheme = "bearer"
	CredentialDatabaseURL CredentialScheme = "database_url"
)

// CredentialSchemes are the schemes a package may name, in the order diagnostics list them.
var CredentialSchemes = []CredentialScheme{CredentialAWSSigV4, CredentialBearer, CredentialDatabaseURL}

// CredentialMember is one member of a connection's `credential:` block.
// A secret one must come from a secret config field (the checker enforces
// it, and output never shows it).
type CredentialMember struct {
	Name             string
	Secret, Required bool
}

// The credential members' names, as a connection's `credential:` writes them.
const (
	MemberKeyID        = "key_id"        // aws_sigv4's access key id
	MemberSecret       = "secret"        // aws_sigv4's secret access key
	MemberSessionToken = "session_token" // aws_sigv4's temporary session token
	MemberToken        = "token"         // bearer's token
	MemberURL          = "url"           // database_url's URL
)

// schemeMembers are each scheme's credential members, in the order they
// are written: a scheme is one entry here (its name in CredentialSchemes),
// and its authenticator one in providers' schemes.
var schemeMembers = map[CredentialScheme][]CredentialMember{
	CredentialAWSSigV4: {{MemberKeyID, false, true}, {MemberSecret, true, true}, {MemberSessionToken, true, false}},
	CredentialBearer:   {{MemberToken, true, true}},
	// The database's URL: secret, as it usually holds a password.
	CredentialDatabaseURL: {{MemberURL, true, true}},
}

// Members lists the credential members s takes, in the order they are written.
func (s CredentialScheme) Members() []CredentialMember { return schemeMembers[s] }

// Known reports whether s is "" (no credential) or one of CredentialSchemes.
func (s CredentialScheme) Known() bool {
	_, ok := schemeMembers[s]
	return s == "" || ok
}

// Driver is a receiving driver built into the toolchain
// (`provide receiving { driver: <name> }`); "" means the package's own
// `receive:`/`acknowledge:` mapping.
type Driver string

const (
	DriverMapping          Driver = ""
	DriverCloudflareQueues Driver = "cloudflare_queues" // Cloudflare Queues' HTTP pull consumer
	DriverSQLInbox         Driver = "sql_inbox"         // a table of a SQL database
)

// A driver's name beside its contract: the drivers a package may name are
// those the commands hand the checker (providers.Drivers, in the order
// diagnostics list them). The two above are named here because the
// checker's Workers target and dev's SQL inbox tables read them; a new
// driver names itself in its own package.
