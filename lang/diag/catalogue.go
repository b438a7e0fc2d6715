package diag

// Entry is a code's row in the catalogue.
type Entry struct {
	Code     string
	Severity Severity
	// Title is the code's summary template: what every diagnostic of the code
	// is about. A diagnostic's own Summary names its concrete case.
	Title string
	// Help is the default help text.
	Help string
}

// Catalogue holds every code the toolchain can emit. A test fails when a code
// is emitted that is missing here, or when a code here is emitted by no test
// case, and each code has its page docs/diagnostics/<code>.md.
var Catalogue = map[string]Entry{}

func init() {
	for _, e := range entries {
		if _, dup := Catalogue[e.Code]; dup {
			panic("diag: code catalogued twice: " + e.Code)
		}
		Catalogue[e.Code] = e
	}
}

// DocsPath is where a code's page lives, relative to the repository root.
func DocsPath(code string) string { return "docs/diagnostics/" + code + ".md" }

// DocsBase is the canonical address of the repository's files on the web
// (docs/reference/json.md, "Where a code's page is"): a page's URI is DocsBase
// followed by its DocsPath.
const DocsBase = "https://github.com/jadpo/jadpo/blob/main/"

// DocsURI is the absolute address of a code's page, for editors and the JSON
// report's docsUri.
func DocsURI(code string) string { return DocsBase + DocsPath(code) }

var entries = []Entry{
	// Lexical and syntax problems: the parser knows no rules, only shapes.
	{"syntax.unexpected_token", Error, "unexpected `{token}`",
		"fix the token the label points at; `jadpo explain syntax.unexpected_token` shows the usual causes"},
	{"syntax.unterminated_string", Error, "text is not closed before the end of the line",
		"close the text with `\"`; text literals stay on one line"},
	{"syntax.invalid_escape", Error, "`{escape}` is not an escape text may use",
		"text may use only the escapes \\\" \\\\ \\n \\r \\t"},
	{"syntax.stray_character", Error, "`{char}` cannot appear here",
		"remove the character; comments start with `//`"},
	{"syntax.invalid_encoding", Error, "the file is not valid UTF-8",
		"save the file as UTF-8"},

	// The project as a whole.
	{"toolchain.empty_project", Error, "the project has no app.jadpo",
		"a project is a directory holding app.jadpo"},
	{"toolchain.project_read_failed", Error, "the project could not be read",
		"check that the directory exists and is readable"},
	{"toolchain.build_write_failed", Error, "the build output could not be written",
		"check that the project's build/ folder can be written: a folder, not a file, writable, on a disk with room"},
	{"toolchain.more_diagnostics", Error, "and {n} more problems in the file",
		"a file shows at most 100 diagnostics; fix these and check again"},
	{"toolchain.usage_invalid", Error, "the command was used wrongly",
		"run `jadpo help <command>` for its arguments and flags"},

	// Modules and names.
	{"module.not_found", Error, "`use` names a module that does not exist",
		"a module is a .jadpo file of the project, named by its path without .jadpo"},
	{"module.name_not_found", Error, "the module declares no such name",
		"check the name's spelling in the module it comes from"},
	{"module.name_not_public", Error, "the name is not public in its module",
		"mark the declaration `public` to use it from another file"},
	{"module.duplicate_name", Error, "a name is brought into the file twice",
		"bring each name in once, and do not declare a name you bring in"},
	{"module.unused_name", Warning, "a name brought in by `use` is never used",
		"remove the name from the `use` line (the line, if it is its only name)"},
	{"module.use_misplaced", Error, "a `use` line comes after a declaration",
		"put every `use` line at the top of the file"},
	{"module.cycle", Error, "`use` lines form a cycle",
		"move the shared declarations into a module that both can use"},
	{"semantic.name_case", Error, "a name is in the wrong case",
		"UpperCamelCase for types, enums, values, events, config and packages; lower_snake_case for the rest"},
	{"semantic.duplicate_name", Error, "a name or key is given twice",
		"give each declaration, field and key once"},
	{"semantic.one_per_app", Error, "the app declares a second config or store",
		"an app has at most one config and one store"},
	{"semantic.misplaced_declaration", Error, "a declaration is in a file where it does not belong",
		"app files hold the app's declarations; package files hold the package's"},
	{"semantic.public_ignored", Warning, "`public` changes nothing on an app-wide declaration",
		"a config, store, connection, queue or subscriber is seen from every module without `use`; remove `public`"},

	// Types.
	{"type.unknown_name", Error, "a type name does not resolve",
		"declare the type, bring it in with `use`, or use a built-in type"},
	{"type.constraint_invalid", Error, "a rule does not fit its type",
		"min/max fit Int and Decimal; min_length/max_length fit Text, Email and Url; pattern and format fit Text"},
	{"type.arguments_invalid", Error, "a generic type has the wrong arguments",
		"write List<T> or Map<Text, T>"},
	{"type.cycle", Error, "a type refers to itself",
		"a type refines a scalar base; break the loop"},
	{"type.mismatch", Error, "a value does not fit the type its place expects",
		"give a value of the expected type"},

	// Config and store.
	{"config.binding_required", Error, "a config field has no `binding`",
		"name the environment variable the field is read from"},
	{"config.unknown_option", Error, "a config field's option is unknown or ill-formed",
		"a config field takes `binding`, `secret`, `default` and its type's rules"},
	{"config.secret_default", Error, "a secret config field has a default",
		"a secret comes from the environment or .env.local only"},
	{"config.secret_flow", Error, "a secret flows where it could be shown",
		"a secret may flow only into a credential's secret members and a store's `database`"},
	{"config.unused_field", Warning, "a config field is never used",
		"remove the field, or use it where it is meant to go: `config.<field>`"},
	{"config.unknown_field", Error, "`config.<field>` names no config field",
		"declare the field in the app's config"},
	{"store.value_invalid", Error, "the store's `database` or `retention` is not usable",
		"give a postgres:// URL from config, or sqlite: and a path; retention takes durations from 1m to 3650d"},
	{"event.store_required", Error, "the app receives events but has no store",
		"declare a store: store primary { }"},

	// Connections, queues, subscribers.
	{"connection.value_invalid", Error, "a connection's value is wrong, missing, unknown or ill-typed",
		"give each setting and credential member the package declares, of its type"},
	{"connection.unused", Warning, "a connection has no queue and no call",
		"remove the connection, or receive from it (`queue <name>`) or call it (`attempt <name>....`)"},
	{"receiving.invalid", Error, "a queue cannot be received as written",
		"a queue receives from its connection, reads an id (and a type) and lists its events"},
	{"receiving.target_unsupported", Error, "the build target cannot run this part of the app",
		"under --target workers a Worker consumes Cloudflare queues and calls json_http operations (docs/workers.md); build for the native runtime (no --target) for the rest"},
	{"subscriber.invalid", Error, "a subscriber names something it cannot use",
		"handlers name events in scope and call operations of the app's connections"},

	// Packages.
	{"package.not_installed", Error, "a connection names a package that is not installed",
		"install it with `jadpo package add <Name.vVERSION>`"},
	{"package.lock_mismatch", Error, "an installed package does not match jadpo.lock",
		"install the package again with `jadpo package add`"},
	{"package.not_catalogue", Error, "a package bears a catalogue name but is not a copy the catalogue published",
		"install the catalogue's copy with `jadpo package add <Name.vVERSION>`, or give your own package a name of its own"},
	{"package.invalid", Error, "a package's files are not laid out as a package",
		"a package holds package.jadpo, resources/<name>.jadpo and provides/<capability>.jadpo"},
	{"package.provider_invalid", Error, "a package's provider or capability mapping is wrong",
		"compare it with a catalogue package: `jadpo package add AmazonSqs.v2012_11_05` installs one whose provides/receiving.jadpo maps each part"},
	{"package.operation_invalid", Error, "a package's operation is declared wrongly",
		"an operation takes `input`, `output`, `retry_safe`, `decode`, and for json_http `method` and `path`"},
	{"toolchain.not_built_yet", Error, "the feature is not built yet",
		"this toolchain builds the receiving slice"},
}
