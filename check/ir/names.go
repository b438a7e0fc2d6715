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

// Members lists the credential members s takes, in the order they are written.
func (s CredentialScheme) Members() []CredentialMember {
	switch s {
	case CredentialAWSSigV4:
		return []CredentialMember{{MemberKeyID, false, true}, {MemberSecret, true, true}, {MemberSessionToken, true, false}}
	case CredentialBearer:
		return []CredentialMember{{MemberToken, true, true}}
	case CredentialDatabaseURL:
		// The database's URL: secret, as it usually holds a password.
		return []CredentialMember{{MemberURL, true, true}}
	}
	return nil
}

// Known reports whether s is "" (no credential) or one of CredentialSchemes.
func (s CredentialScheme) Known() bool {
	return s == "" || s == CredentialAWSSigV4 || s == CredentialBearer || s == CredentialDatabaseURL
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

// Drivers are the built-in drivers a package may name, in the order diagnostics list them.
var Drivers = []Driver{DriverCloudflareQueues, DriverSQLInbox}
