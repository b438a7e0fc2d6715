package diag

// Code names a kind of problem: `group.name`, printed in brackets
// (error[receiving.invalid]), the key of the JSON report and of the code's
// page. Every code is a constant below and a row of the table (entries), and
// only there: every emitter names its code by the constant, and
// TestNoRawCodeOutsideTheTable (lang/diag/rawcode_test.go) fails on a code
// spelled as a string anywhere else in the toolchain's sources.
type Code string

// The codes, one a row of entries below.
const (
	// Lexical and syntax problems: the parser knows no rules, only shapes.
	SyntaxUnexpectedToken    Code = "syntax.unexpected_token"
	SyntaxUnterminatedString Code = "syntax.unterminated_string"
	SyntaxInvalidEscape      Code = "syntax.invalid_escape"
	SyntaxStrayCharacter     Code = "syntax.stray_character"
	SyntaxInvalidEncoding    Code = "syntax.invalid_encoding"

	// The project as a whole.
	ToolchainEmptyProject      Code = "toolchain.empty_project"
	ToolchainProjectReadFailed Code = "toolchain.project_read_failed"
	ToolchainBuildWriteFailed  Code = "toolchain.build_write_failed"
	ToolchainMoreDiagnostics   Code = "toolchain.more_diagnostics"
	ToolchainUsageInvalid      Code = "toolchain.usage_invalid"

	// Modules and names.
	ModuleNotFound               Code = "module.not_found"
	ModuleNameNotFound           Code = "module.name_not_found"
	ModuleNameNotPublic          Code = "module.name_not_public"
	ModuleDuplicateName          Code = "module.duplicate_name"
	ModuleUnusedName             Code = "module.unused_name"
	ModuleUseMisplaced           Code = "module.use_misplaced"
	ModuleCycle                  Code = "module.cycle"
	SemanticNameCase             Code = "semantic.name_case"
	SemanticDuplicateName        Code = "semantic.duplicate_name"
	SemanticOnePerApp            Code = "semantic.one_per_app"
	SemanticMisplacedDeclaration Code = "semantic.misplaced_declaration"
	SemanticPublicIgnored        Code = "semantic.public_ignored"

	// Types.
	TypeUnknownName       Code = "type.unknown_name"
	TypeConstraintInvalid Code = "type.constraint_invalid"
	TypeArgumentsInvalid  Code = "type.arguments_invalid"
	TypeCycle             Code = "type.cycle"
	TypeMismatch          Code = "type.mismatch"

	// Config and store.
	ConfigBindingRequired Code = "config.binding_required"
	ConfigUnknownOption   Code = "config.unknown_option"
	ConfigSecretDefault   Code = "config.secret_default"
	ConfigSecretFlow      Code = "config.secret_flow"
	ConfigUnusedField     Code = "config.unused_field"
	ConfigUnknownField    Code = "config.unknown_field"
	StoreValueInvalid     Code = "store.value_invalid"
	EventStoreRequired    Code = "event.store_required"

	// Connections, queues, subscribers.
	ConnectionValueInvalid     Code = "connection.value_invalid"
	ConnectionUnused           Code = "connection.unused"
	ReceivingInvalid           Code = "receiving.invalid"
	ReceivingTargetUnsupported Code = "receiving.target_unsupported"
	SubscriberInvalid          Code = "subscriber.invalid"

	// Packages.
	PackageNotInstalled     Code = "package.not_installed"
	PackageLockMismatch     Code = "package.lock_mismatch"
	PackageNotCatalogue     Code = "package.not_catalogue"
	PackageInvalid          Code = "package.invalid"
	PackageProviderInvalid  Code = "package.provider_invalid"
	PackageOperationInvalid Code = "package.operation_invalid"
	ToolchainNotBuiltYet    Code = "toolchain.not_built_yet"
)

// Entry is a code's row in the table: its severity, its title, its default
// help, and the rest of its page (docs/diagnostics/<code>.md, `jadpo explain
// CODE`): what the code means, and its usual causes, each with its fix. The
// page's "How to fix" is Help; its example is the first golden case that
// reports the code (TestDocsPages in cmd/jadpo writes the pages).
type Entry struct {
	Code     Code
	Severity Severity
	// Title is the code's summary template: what every diagnostic of the code
	// is about. A diagnostic's own Summary names its concrete case.
	Title string
	// Help is the default help text.
	Help string
	// Means says what the code means, for its page.
	Means string
	// Causes are the code's usual causes, each with its fix.
	Causes []Cause
}

// Cause is one usual cause and its fix. A cause that shows a form in
// backticks before its dash (`first_delay: 10` — ...) names the golden case
// (testdata/cases/<Case>) that writes the form and reports the page's code:
// cmd/jadpo's TestPageExamplesAreWhatCheckReports holds each to it, so a
// page cannot claim an example the tool reports otherwise.
type Cause struct {
	Text string
	Case string
}

// entries is the one table of codes: the catalogue, explain and the pages
// come from it.
var entries = []Entry{
	// Lexical and syntax problems: the parser knows no rules, only shapes.
	{Code: SyntaxUnexpectedToken, Severity: Error, Title: "unexpected `{token}`",
		Help:  "fix the token the label points at; `jadpo explain syntax.unexpected_token` shows the usual causes",
		Means: "The parser met a token where the declaration's shape does not allow it, and stopped reading that declaration there. The label under the token says what was expected; the rest of the file is still read, one diagnostic a declaration.",
		Causes: []Cause{
			{Text: "A member given with `=` instead of `:` — write `id_at: \"id\"`.", Case: "syntax_member_equals"},
			{Text: "Members separated by commas — members of a `{ }` body are separated by whitespace: `{ max_attempts: 5 first_delay: 10s }`.", Case: "syntax_three_errors"},
			{Text: "A URL or another text left unquoted — `host: \"https://sqs.eu-west-1.amazonaws.com\"`.", Case: "syntax_unquoted_url"},
			{Text: "A misspelt declaration keyword (`subscribr`, `Store`) — keywords are lower case: `store`, `subscriber`, `queue`, ...", Case: "syntax_keyword_typo"},
			{Text: "A handler without its parameter — `on OrderShipped(e) {`, then read the event as `e`.", Case: "syntax_handler_no_parameter"},
			{Text: "A module path with its extension — `use events/signups { UserSignedUp }`, not `events/signups.jadpo`.", Case: "syntax_use_extension"},
			{Text: "A brace missing — the diagnostic is at the `{` left open.", Case: "syntax_unclosed_brace"},
		}},
	{Code: SyntaxUnterminatedString, Severity: Error, Title: "text is not closed before the end of the line",
		Help:  "close the text with `\"`; text literals stay on one line",
		Means: "A text literal was opened with `\"` and the line ended before it was closed.",
		Causes: []Cause{
			{Text: "The closing `\"` is missing — add it.", Case: "syntax_unterminated_string"},
			{Text: "A text spread over two lines — text literals stay on one line; use `\\n` for a line break inside."},
		}},
	{Code: SyntaxInvalidEscape, Severity: Error, Title: "`{escape}` is not an escape text may use",
		Help:  "text may use only the escapes \\\" \\\\ \\n \\r \\t",
		Means: "A backslash in a text literal starts an escape the language does not have.",
		Causes: []Cause{
			{Text: "A Windows path or a regular expression with single backslashes — double each: `\"\\\\d+\"`."},
			{Text: "An escape from another language (`\\u00e9`, `\\x41`) — write the character itself; files are UTF-8.", Case: "syntax_foreign_escape"},
		}},
	{Code: SyntaxStrayCharacter, Severity: Error, Title: "`{char}` cannot appear here",
		Help:  "remove the character; comments start with `//`",
		Means: "A character that no token of the language starts with.",
		Causes: []Cause{
			{Text: "Text in single quotes (`'id'`) — text takes double quotes: `\"id\"`.", Case: "syntax_single_quotes"},
			{Text: "A comment with `#` or `/* */` — comments start with `//` and run to the end of the line.", Case: "syntax_hash_comment"},
			{Text: "A semicolon at the end of a line — there are none: remove it."},
			{Text: "A character pasted from a word processor (a curly quote, a non-breaking space) — retype it."},
		}},
	{Code: SyntaxInvalidEncoding, Severity: Error, Title: "the file is not valid UTF-8",
		Help:  "save the file as UTF-8",
		Means: "The file holds bytes that are not UTF-8.",
		Causes: []Cause{
			{Text: "The file was saved in Latin-1 or UTF-16 — save it as UTF-8 in your editor."},
		}},

	// The project as a whole.
	{Code: ToolchainEmptyProject, Severity: Error, Title: "the project has no app.jadpo",
		Help:  "a project is a directory holding app.jadpo",
		Means: "The folder given to the command holds no `app.jadpo`, the file that makes a folder a project.",
		Causes: []Cause{
			{Text: "The command ran in the wrong folder — run it in the project's folder, or give the folder: `jadpo check path/to/app`."},
			{Text: "A new project without its root file — create `app.jadpo`, or start with `jadpo init DIR`."},
		}},
	{Code: ToolchainProjectReadFailed, Severity: Error, Title: "the project could not be read",
		Help:  "check that the directory exists and is readable",
		Means: "A file or folder of the project could not be read; the message names it and why.",
		Causes: []Cause{
			{Text: "The folder does not exist, or is not readable by you — check the path and its permissions."},
			{Text: "A .jadpo file is a symbolic link leading outside the project, or to nothing — make it a regular file inside the project."},
			{Text: "A source file is larger than 8 MiB — split it into modules."},
			{Text: "A .jadpo name on a named pipe, a device or a socket — rename or remove it."},
		}},
	{Code: ToolchainBuildWriteFailed, Severity: Error, Title: "the build output could not be written",
		Help:  "check that the project's build/ folder can be written: a folder, not a file, writable, on a disk with room",
		Means: "`jadpo build` could not write one of its files under `build/`.",
		Causes: []Cause{
			{Text: "`build` exists as a file, or is not writable — remove it or fix its permissions.", Case: "toolchain_build_write_failed"},
			{Text: "The disk is full — free some room and build again."},
		}},
	{Code: ToolchainMoreDiagnostics, Severity: Error, Title: "and {n} more problems in the file",
		Help:  "a file shows at most 100 diagnostics; fix these and check again",
		Means: "A file had more than 100 problems; the first 100 are shown, and this one counts the rest. The totals count every problem.",
		Causes: []Cause{
			{Text: "One early mistake repeated throughout a generated or pasted file — fix the first ones and check again; the rest often go with them."},
		}},
	{Code: ToolchainUsageInvalid, Severity: Error, Title: "the command was used wrongly",
		Help:  "run `jadpo help <command>` for its arguments and flags",
		Means: "The command was called with a flag, an argument or a value it does not take (reported as JSON under `--format json`).",
		Causes: []Cause{
			{Text: "A misspelt flag (`--bogus`), or a value outside its choices (--format yaml) — `jadpo help <command>` lists them.", Case: "toolchain_usage_invalid"},
			{Text: "Too many folders given — a command takes one project folder."},
		}},

	// Modules and names.
	{Code: ModuleNotFound, Severity: Error, Title: "`use` names a module that does not exist",
		Help:  "a module is a .jadpo file of the project, named by its path without .jadpo",
		Means: "A `use` line names a module that no file of the project is.",
		Causes: []Cause{
			{Text: "A misspelt path — a module is the file's path from the project folder without `.jadpo`: `stock/events.jadpo` is `stock/events`.", Case: "module_not_found"},
			{Text: "The file is under build/, packages/ or a folder starting with a dot, which are not read as modules — move it."},
		}},
	{Code: ModuleNameNotFound, Severity: Error, Title: "the module declares no such name",
		Help:  "check the name's spelling in the module it comes from",
		Means: "A `use` line brings in a name that its module does not declare.",
		Causes: []Cause{
			{Text: "A misspelt name — the help suggests the nearest one the module declares."},
			{Text: "The declaration lives in another module — `use` that module instead."},
		}},
	{Code: ModuleNameNotPublic, Severity: Error, Title: "the name is not public in its module",
		Help:  "mark the declaration `public` to use it from another file",
		Means: "A `use` line brings in a declaration that its module does not mark `public`.",
		Causes: []Cause{
			{Text: "Mark the declaration `public` in its module: `public event OrderShipped { ... }`."},
		}},
	{Code: ModuleDuplicateName, Severity: Error, Title: "a name is brought into the file twice",
		Help:  "bring each name in once, and do not declare a name you bring in",
		Means: "A name is brought into a file twice, or brought in and also declared there.",
		Causes: []Cause{
			{Text: "A name brought in twice, by one use line or two — keep one.", Case: "module_duplicate_name"},
			{Text: "The file declares a name it also brings in — rename one, or drop the `use`."},
		}},
	{Code: ModuleUnusedName, Severity: Warning, Title: "a name brought in by `use` is never used",
		Help:  "remove the name from the `use` line (the line, if it is its only name)",
		Means: "A `use` line brings in a name that its file never uses. It is a warning: the check still passes. Reported once the project has no errors.",
		Causes: []Cause{
			{Text: "A declaration that used the name was removed or moved — remove the name from the `use` line (the editor's quick fix does; the whole line when it was its only name)."},
		}},
	{Code: ModuleUseMisplaced, Severity: Error, Title: "a `use` line comes after a declaration",
		Help:  "put every `use` line at the top of the file",
		Means: "A `use` line comes after a declaration; `use` lines open a file.",
		Causes: []Cause{
			{Text: "Move every `use` line to the top of the file, before the first declaration (comments may come before them)."},
		}},
	{Code: ModuleCycle, Severity: Error, Title: "`use` lines form a cycle",
		Help:  "move the shared declarations into a module that both can use",
		Means: "Modules `use` each other in a circle: `a` uses `b`, which uses `a`.",
		Causes: []Cause{
			{Text: "Two modules share types both ways — move the shared declarations into a third module both `use`."},
		}},
	{Code: SemanticNameCase, Severity: Error, Title: "a name is in the wrong case",
		Help:  "UpperCamelCase for types, enums, values, events, config and packages; lower_snake_case for the rest",
		Means: "A name is spelt in the wrong case for what it names. Types, enums, values, events, the config and packages are UpperCamelCase; fields, settings, connections, queues, subscribers, resources, operations and enum variants are lower_snake_case.",
		Causes: []Cause{
			{Text: "`event orderShipped` — rename the declaration `OrderShipped`; its uses already spelt that way then resolve.", Case: "semantic_name_case_event"},
			{Text: "`connection Packing` — connections, queues and subscribers are lower_snake_case: `packing`; its uses already spelt that way then resolve.", Case: "semantic_name_case_connection"},
		}},
	{Code: SemanticDuplicateName, Severity: Error, Title: "a name or key is given twice",
		Help:  "give each declaration, field and key once",
		Means: "The same name or key is given twice where each must be unique: two declarations of one name in a module, two fields of one record, one member twice in a block, one argument twice in a call.",
		Causes: []Cause{
			{Text: "A declaration copied and not renamed — rename or remove one; the note shows the first."},
			{Text: "A member given twice in one block — keep one."},
		}},
	{Code: SemanticOnePerApp, Severity: Error, Title: "the app declares a second config or store",
		Help:  "an app has at most one config and one store",
		Means: "An app has at most one `config` and one `store`, and this is a second.",
		Causes: []Cause{
			{Text: "A module declares its own config — put every field in the one config; it is app-wide."},
			{Text: "Two stores for two kinds of events — one store keeps every event of the app."},
		}},
	{Code: SemanticMisplacedDeclaration, Severity: Error, Title: "a declaration is in a file where it does not belong",
		Help:  "app files hold the app's declarations; package files hold the package's",
		Means: "A declaration is in a file where it does not belong: a package's (`package`, `provider`, `settings`, `resource`, `provide`) in an app file, or an app's (`config`, `store`, `connection`, `queue`, `subscriber`) in a package.",
		Causes: []Cause{
			{Text: "Package files placed among the app's modules — install the package under `packages/` with `jadpo package add ./path`."},
			{Text: "An app declaration written into a package file — move it to `app.jadpo` or a module of the app."},
		}},
	{Code: SemanticPublicIgnored, Severity: Warning, Title: "`public` changes nothing on an app-wide declaration",
		Help:  "a config, store, connection, queue or subscriber is seen from every module without `use`; remove `public`",
		Means: "`public` is written on a `config`, `store`, `connection`, `queue` or `subscriber`. These are app-wide: declared in `app.jadpo` or in any module, each is seen from every module of the app without `use`, so `public` on them changes nothing. It is a warning: the check still passes. `public` matters on types, enums, values and events, which other files bring in with `use`.",
		Causes: []Cause{
			{Text: "Written as on an event (`public connection packing`), to use the declaration from another module — remove `public`; the editor's quick fix does, and the other module needs nothing to see it.", Case: "semantic_public_ignored"},
		}},

	// Types.
	{Code: TypeUnknownName, Severity: Error, Title: "a type name does not resolve",
		Help:  "declare the type, bring it in with `use`, or use a built-in type",
		Means: "A type is named that is neither built in nor declared in scope.",
		Causes: []Cause{
			{Text: "A misspelt type — the help suggests the nearest (`Txt` → `Text`).", Case: "type_unknown_name"},
			{Text: "The type is declared in another module — bring it in: `use stock/types { Sku }` (the help names the line)."},
			{Text: "A lower-case built-in (`text`) — built-in types are `Text Int Decimal Bool Uuid Instant Email Url Duration`, `List<T>`, `Map<Text, T>`.", Case: "type_unknown_lowercase"},
		}},
	{Code: TypeConstraintInvalid, Severity: Error, Title: "a rule does not fit its type",
		Help:  "min/max fit Int and Decimal; min_length/max_length fit Text, Email and Url; pattern and format fit Text",
		Means: "A rule in `{ }` after a type does not fit that type, or cannot be satisfied.",
		Causes: []Cause{
			{Text: "A rule on the wrong base — `min`/`max` fit Int and Decimal, `min_length`/`max_length` fit Text, Email and Url, `pattern` and `format` fit Text."},
			{Text: "`min` above `max`, or min_length above max_length — no value could fit.", Case: "type_constraint_min_above_max"},
			{Text: "A pattern that does not compile as an RE2 regular expression (no back-references or look-arounds)."},
			{Text: "An unknown rule name — the help lists the rules."},
		}},
	{Code: TypeArgumentsInvalid, Severity: Error, Title: "a generic type has the wrong arguments",
		Help:  "write List<T> or Map<Text, T>",
		Means: "A generic type is given the wrong type arguments.",
		Causes: []Cause{
			{Text: "A list with the wrong number of types (`List<OrderLine, Sku>`) — write `List<OrderLine>`.", Case: "type_arguments_invalid"},
			{Text: "A map keyed by something other than text — maps are `Map<Text, T>`."},
			{Text: "Arguments on a type that takes none (`Text<Int>`) — remove them.", Case: "type_arguments_on_scalar"},
		}},
	{Code: TypeCycle, Severity: Error, Title: "a type refers to itself",
		Help:  "a type refines a scalar base; break the loop",
		Means: "Type declarations refer to each other in a loop, so none has a base.",
		Causes: []Cause{
			{Text: "`type Moment = ShippedAt` while `ShippedAt` is `Moment` — make one of them refine a scalar base such as `Text`.", Case: "type_cycle"},
		}},
	{Code: TypeMismatch, Severity: Error, Title: "a value does not fit the type its place expects",
		Help:  "give a value of the expected type",
		Means: "A value does not fit the type its place expects: a literal of another kind, a value outside its type's rules, or a field of another type passed as an argument.",
		Causes: []Cause{
			{Text: "A number where text is expected, or text where a number is — match the declared type.", Case: "type_mismatch"},
			{Text: "A literal outside the rules of an operation's input — keep within them (a setting's value outside its rules, `wait_time_seconds: 30` where the maximum is 20, is `connection.value_invalid`)."},
			{Text: "An event's field of another type passed to an operation — pass a field of the input's type; Text takes Email, Url, Uuid and enums."},
			{Text: "A list, map or value type on a config field (`packing_account: List<Text>`) — config values are single scalars.", Case: "type_mismatch_config_list"},
		}},

	// Config and store.
	{Code: ConfigBindingRequired, Severity: Error, Title: "a config field has no `binding`",
		Help:  "name the environment variable the field is read from",
		Means: "A config field does not say which environment variable it is read from.",
		Causes: []Cause{
			{Text: "Add `{ binding: \"NAME\" }` after the field's type; the help suggests the name."},
		}},
	{Code: ConfigUnknownOption, Severity: Error, Title: "a config field's option is unknown or ill-formed",
		Help:  "a config field takes `binding`, `secret`, `default` and its type's rules",
		Means: "A config field's option is not one a config field takes, or its value is ill-formed.",
		Causes: []Cause{
			{Text: "A misspelt option — a config field takes `binding`, `secret`, `default` and its type's rules."},
			{Text: "`secret: yes` — `secret` takes `true` or `false`.", Case: "config_unknown_option_secret"},
			{Text: "A binding that is not a variable's name (`binding: \"packing account\"`) — letters, digits and `_`.", Case: "config_unknown_option_binding"},
			{Text: "A `default` that is not a literal (`default: config.other`) — give a literal of the field's type.", Case: "config_unknown_option_default"},
		}},
	{Code: ConfigSecretDefault, Severity: Error, Title: "a secret config field has a default",
		Help:  "a secret comes from the environment or .env.local only",
		Means: "A secret config field has a `default`; a secret's value must never be written in source.",
		Causes: []Cause{
			{Text: "Remove the default and give the value in the environment or `.env.local`."},
			{Text: "The value is not secret after all (a URL without a password) — drop `secret: true`."},
		}},
	{Code: ConfigSecretFlow, Severity: Error, Title: "a secret flows where it could be shown",
		Help:  "a secret may flow only into a credential's secret members and a store's `database`",
		Means: "A secret could end up where it would be shown: in an operation's argument, a setting, a host, or a password written in a store's database URL.",
		Causes: []Cause{
			{Text: "A secret config field passed to an operation or a setting — a secret flows only into a credential's secret members and a store's `database`."},
			{Text: "A database URL with its password in the source — read it from a secret config field: `database: config.database_url`."},
		}},
	{Code: ConfigUnusedField, Severity: Warning, Title: "a config field is never used",
		Help:  "remove the field, or use it where it is meant to go: `config.<field>`",
		Means: "A config field that nothing reads: no connection, store, subscriber or other place names `config.<field>`. It is a warning: the check still passes. An unused field is still read from the environment at start (a required one must be set), and `--target workers` lists it among the Worker's `[vars]` or secrets, so it costs every run something for nothing. Reported once the project has no errors.",
		Causes: []Cause{
			{Text: "A field left over after the place that read it was removed — remove it; the editor's quick fix does."},
			{Text: "A field meant for a setting that was given a literal instead — write `config.<field>` there, or remove the field."},
		}},
	{Code: ConfigUnknownField, Severity: Error, Title: "`config.<field>` names no config field",
		Help:  "declare the field in the app's config",
		Means: "`config.<field>` names a field the app's config does not declare.",
		Causes: []Cause{
			{Text: "A misspelt field name — the help suggests the nearest."},
			{Text: "The field was never declared — add it to the config with its binding."},
		}},
	{Code: StoreValueInvalid, Severity: Error, Title: "the store's `database` or `retention` is not usable",
		Help:  "give a postgres:// URL from config, or sqlite: and a path; retention takes durations from 1m to 3650d",
		Means: "The store's `database` or `retention` cannot be used as written.",
		Causes: []Cause{
			{Text: "A database that is neither a postgres:// URL nor sqlite:PATH — or read it from config: `database: config.database_url`."},
			{Text: "A retention duration out of range — each of `succeeded` and `outbox` takes `1m` to `3650d`.", Case: "store_retention_out_of_range"},
			{Text: "An unknown member — a store takes `database` and `retention`."},
		}},
	{Code: EventStoreRequired, Severity: Error, Title: "the app receives events but has no store",
		Help:  "declare a store: store primary { }",
		Means: "The app receives events (it has a queue or a subscriber) but declares no store to keep them in.",
		Causes: []Cause{
			{Text: "Add `store main { }`: it keeps events in `build/local.sqlite`, or in the database `DATABASE_URL` names."},
		}},

	// Connections, queues, subscribers.
	{Code: ConnectionValueInvalid, Severity: Error, Title: "a connection's value is wrong, missing, unknown or ill-typed",
		Help:  "give each setting and credential member the package declares, of its type",
		Means: "A connection's value is wrong, missing, unknown or of the wrong type for its package.",
		Causes: []Cause{
			{Text: "A setting the package declares without a default is not given — add it under `settings:` (its package's page lists them)."},
			{Text: "A quoted package name (`package: \"AmazonSqs.v2012_11_05\"`) — the package is named unquoted.", Case: "connection_package_quoted"},
			{Text: "A credential member missing or not from config — `credential: { key_id: config.x secret: config.y }`, secret members from secret fields."},
			{Text: "No `host:` for a package without a fixed host, or a `host:` that is not an http(s) URL."},
			{Text: "A setting's value outside its type (a duration without unit, a number over its maximum)."},
			{Text: "Settings a queue driver cannot take together: for a SQL inbox, `claim: lease` without `locked_until`, `lock_key` outside `claim: advisory_lock`, `locked_until` outside `claim: lease`, or a column named twice — the help says which to add or remove.", Case: "connection_sql_lease_without_locked_until"},
			{Text: "A listed event's required field (`region: Text`) that a SQL inbox without a fetch of its own reads no column for: its body holds only the columns the settings name, so every row would be parked `region: required` — add it to `columns:`, or make the field optional.", Case: "connection_sql_field_not_read"},
		}},
	{Code: ConnectionUnused, Severity: Warning, Title: "a connection has no queue and no call",
		Help:  "remove the connection, or receive from it (`queue <name>`) or call it (`attempt <name>....`)",
		Means: "A connection that no queue receives from (no `queue` of its name) and no subscriber calls (no `attempt <connection>....`). It is a warning: the check still passes. Its credentials and settings are still required at start. Reported once the project has no errors.",
		Causes: []Cause{
			{Text: "A queue or subscriber was removed and its connection left — remove the connection; the editor's quick fix does."},
			{Text: "The queue is named otherwise than the connection — a queue receives from the connection of its own name: `queue orders` from `connection orders`."},
		}},
	{Code: ReceivingInvalid, Severity: Error, Title: "a queue cannot be received as written",
		Help:  "a queue receives from its connection, reads an id (and a type) and lists its events",
		Means: "A queue cannot be received as written.",
		Causes: []Cause{
			{Text: "No connection of the queue's name — `queue orders` receives from `connection orders`."},
			{Text: "The connection's package does not provide receiving — use a package with `provides/receiving.jadpo`, such as `AmazonSqs.v2012_11_05`."},
			{Text: "No id_at, or an empty path (`id_at: \"\"`) — `id_at: \"id\"`.", Case: "queue_empty_path"},
			{Text: "Several events without type_at (`events: { ReturnRequested OrderShipped }`), or an event without its wire_name under type_at — with `type_at`, each event gives `{ wire_name: \"...\" }`.", Case: "queue_several_events_without_type_at"},
			{Text: "An event listed that is not an event in scope — declare it, or bring it in with `use`."},
			{Text: "Two SQL inbox queues on one table (the same `url`, `schema` and `table` as written, with `group`) list the same wire_name, so a row of that kind would go to whichever claims it first — list each kind in one queue of the table.", Case: "queue_sql_inbox_kind_twice"},
		}},
	{Code: ReceivingTargetUnsupported, Severity: Error, Title: "the build target cannot run this part of the app",
		Help:  "under --target workers a Worker consumes Cloudflare queues and calls json_http operations (docs/workers.md); build for the native runtime (no --target) for the rest",
		Means: "The build target (`--target workers`) cannot run this part of the app; the same app still builds and runs under `jadpo run`.",
		Causes: []Cause{
			{Text: "A queue that is not a Cloudflare queue (SQS, a SQL inbox) — a Worker consumes Cloudflare queues only."},
			{Text: "A subscriber that calls an SQS operation or sends mail — a Worker calls `json_http` operations only.", Case: "receiving_target_unsupported_subscriber"},
			{Text: "A Worker setting that is not known at build time — give `queue_name`, `d1_database_name`, ... as literals or config fields with a default."},
		}},
	{Code: SubscriberInvalid, Severity: Error, Title: "a subscriber names something it cannot use",
		Help:  "handlers name events in scope and call operations of the app's connections",
		Means: "A subscriber names something it cannot use: an event, a connection, an operation, an argument or a field.",
		Causes: []Cause{
			{Text: "`on OrderShiped(shipment)` names something that is not an event in scope — check its spelling, or `use` its module.", Case: "subscriber_unknown_event"},
			{Text: "`attempt` names a connection the app does not declare, or an operation its package does not have."},
			{Text: "An argument the operation's input does not have, or a required one left out — the help lists them.", Case: "subscriber_unknown_argument_listed"},
			{Text: "A duration without its unit in `retry:` (`first_delay: 10`) — write `10s`.", Case: "subscriber_retry_delay_without_unit"},
			{Text: "A subscriber with no handler — add `on Event(e) { ... }`."},
		}},

	// Packages.
	{Code: PackageNotInstalled, Severity: Error, Title: "a connection names a package that is not installed",
		Help:  "install it with `jadpo package add <Name.vVERSION>`",
		Means: "A connection names a package that is not under `packages/` and in `jadpo.lock`.",
		Causes: []Cause{
			{Text: "The package was never installed — the help gives the exact `jadpo package add` command.", Case: "package_not_installed"},
			{Text: "A version other than the one installed — name the installed version, or install the other (one version a package per app).", Case: "package_not_installed"},
		}},
	{Code: PackageLockMismatch, Severity: Error, Title: "an installed package does not match jadpo.lock",
		Help:  "install the package again with `jadpo package add`",
		Means: "An installed package's files no longer match `jadpo.lock`, or the lock lists what is not installed (or the reverse).",
		Causes: []Cause{
			{Text: "A file under packages/ was edited — reinstall it with `jadpo package add` (the catalogue's name, or the package's own folder, which restores it); change a package by installing a new version.", Case: "package_lock_mismatch_local"},
			{Text: "jadpo.lock and packages/ were committed apart (a package installed but not in the lock) — commit both together.", Case: "package_not_in_lock"},
		}},
	{Code: PackageNotCatalogue, Severity: Error, Title: "a package bears a catalogue name but is not a copy the catalogue published",
		Help:  "install the catalogue's copy with `jadpo package add <Name.vVERSION>`, or give your own package a name of its own",
		Means: "A package bears a name of the catalogue built into the toolchain, but its files are not a copy the catalogue published.",
		Causes: []Cause{
			{Text: "A catalogue package edited by hand — install the catalogue's copy: `jadpo package add AmazonSqs.v2012_11_05`."},
			{Text: "A package of your own named like one of the catalogue's — give it a name of its own in its `package.jadpo`."},
		}},
	{Code: PackageInvalid, Severity: Error, Title: "a package's files are not laid out as a package",
		Help:  "a package holds package.jadpo, resources/<name>.jadpo and provides/<capability>.jadpo",
		Means: "A package's folder or files are not laid out as a package.",
		Causes: []Cause{
			{Text: "The folder is not named for the package it holds (`package Packer.v1` in packages/Packing.v1) — install with `jadpo package add`, which names it.", Case: "package_invalid"},
			{Text: "`package.jadpo` is missing or its header names another package."},
			{Text: "A resource file holds no resource, a second one, or one named other than its file (`resource job` in resources/jobs.jadpo) — `resources/jobs.jadpo` holds `resource jobs`.", Case: "package_resource_misnamed"},
		}},
	{Code: PackageProviderInvalid, Severity: Error, Title: "a package's provider or capability mapping is wrong",
		Help:  "compare it with a catalogue package: `jadpo package add AmazonSqs.v2012_11_05` installs one whose provides/receiving.jadpo maps each part",
		Means: "A package's `provider` block or one of its capability mappings (`provide receiving`, `provide email`) is wrong. Reported in the package's file.",
		Causes: []Cause{
			{Text: "A protocol or credential scheme that does not exist, or a pair that does not go together (`Protocol.sql` goes only with `CredentialScheme.database_url`)."},
			{Text: "A mapping calls an operation the package does not declare, or leaves a required input field unmapped."},
			{Text: "`messages:` not a list, or `body:`/`handle:` not text fields of each item."},
			{Text: "A driver's package lacks what the driver uses (operations or settings named in the message)."},
		}},
	{Code: PackageOperationInvalid, Severity: Error, Title: "a package's operation is declared wrongly",
		Help:  "an operation takes `input`, `output`, `retry_safe`, `decode`, and for json_http `method` and `path`",
		Means: "An operation of a package's resource is declared wrongly.",
		Causes: []Cause{
			{Text: "`input` or `output` that is not a value (record) type."},
			{Text: "For json_http: a method unquoted (`method: POST`) or not one of GET POST PUT PATCH DELETE — write `method: \"POST\"`; a `path` placeholder that is not a setting.", Case: "package_operation_bare_method"},
			{Text: "An unknown member — an operation takes `input`, `output`, `retry_safe`, `decode`, `method` and `path`."},
		}},
	{Code: ToolchainNotBuiltYet, Severity: Error, Title: "the feature is not built yet",
		Help:  "this toolchain builds the receiving slice",
		Means: "The source asks for something the language describes but this toolchain does not build yet.",
		Causes: []Cause{
			{Text: "A capability other than receiving and email (`provide storage`) — remove it for now.", Case: "toolchain_not_built_yet"},
		}},
}
