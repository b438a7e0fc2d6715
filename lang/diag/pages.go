package diag

// Page is what a code's page (docs/diagnostics/<code>.md, `jadpo explain
// CODE`) tells a user beyond the catalogue's row: what the code means, and
// its usual causes, each with its fix. The page's "How to fix" is the
// entry's Help; its example is the first golden case that reports the code.
type Page struct {
	Means  string
	Causes []string
}

// Pages holds a page for every code of the catalogue (a test fails on a code
// without one).
var Pages = map[string]Page{
	"syntax.unexpected_token": {
		Means: "The parser met a token where the declaration's shape does not allow it, and stopped reading that declaration there. The label under the token says what was expected; the rest of the file is still read, one diagnostic a declaration.",
		Causes: []string{
			"A member given with `=` instead of `:` — write `id_at: \"id\"`.",
			"Members separated by commas — members of a `{ }` body are separated by whitespace: `{ max_attempts: 5 first_delay: 10s }`.",
			"A URL or another text left unquoted — `host: \"https://sqs.eu-west-1.amazonaws.com\"`.",
			"A misspelt declaration keyword (`subscribr`, `Store`) — keywords are lower case: `store`, `subscriber`, `queue`, ...",
			"A handler without its parameter — `on OrderShipped(e) {`, then read the event as `e`.",
			"A module path with its extension — `use events/signups { UserSignedUp }`, not `events/signups.jadpo`.",
			"A `{` or `}` missing — the diagnostic is at the brace left open.",
		},
	},
	"syntax.unterminated_string": {
		Means: "A text literal was opened with `\"` and the line ended before it was closed.",
		Causes: []string{
			"The closing `\"` is missing — add it.",
			"A text spread over two lines — text literals stay on one line; use `\\n` for a line break inside.",
		},
	},
	"syntax.invalid_escape": {
		Means: "A backslash in a text literal starts an escape the language does not have.",
		Causes: []string{
			"A Windows path or a regular expression with single backslashes — double each: `\"\\\\d+\"`.",
			"An escape from another language (`\\u00e9`, `\\x41`) — write the character itself; files are UTF-8.",
		},
	},
	"syntax.stray_character": {
		Means: "A character that no token of the language starts with.",
		Causes: []string{
			"Text in single quotes (`'id'`) — text takes double quotes: `\"id\"`.",
			"A comment with `#` or `/* */` — comments start with `//` and run to the end of the line.",
			"A semicolon at the end of a line — there are none: remove it.",
			"A character pasted from a word processor (a curly quote, a non-breaking space) — retype it.",
		},
	},
	"syntax.invalid_encoding": {
		Means: "The file holds bytes that are not UTF-8.",
		Causes: []string{
			"The file was saved in Latin-1 or UTF-16 — save it as UTF-8 in your editor.",
		},
	},
	"toolchain.empty_project": {
		Means: "The folder given to the command holds no `app.jadpo`, the file that makes a folder a project.",
		Causes: []string{
			"The command ran in the wrong folder — run it in the project's folder, or give the folder: `jadpo check path/to/app`.",
			"A new project without its root file — create `app.jadpo`, or start with `jadpo init DIR`.",
		},
	},
	"toolchain.project_read_failed": {
		Means: "A file or folder of the project could not be read; the message names it and why.",
		Causes: []string{
			"The folder does not exist, or is not readable by you — check the path and its permissions.",
			"A `.jadpo` file is a symbolic link leading outside the project, or to nothing — make it a regular file inside the project.",
			"A source file is larger than 8 MiB — split it into modules.",
			"A `.jadpo` name on a named pipe, a device or a socket — rename or remove it.",
		},
	},
	"toolchain.build_write_failed": {
		Means: "`jadpo build` could not write one of its files under `build/`.",
		Causes: []string{
			"`build` exists as a file, or is not writable — remove it or fix its permissions.",
			"The disk is full — free some room and build again.",
		},
	},
	"toolchain.more_diagnostics": {
		Means: "A file had more than 100 problems; the first 100 are shown, and this one counts the rest. The totals count every problem.",
		Causes: []string{
			"One early mistake repeated throughout a generated or pasted file — fix the first ones and check again; the rest often go with them.",
		},
	},
	"toolchain.usage_invalid": {
		Means: "The command was called with a flag, an argument or a value it does not take (reported as JSON under `--format json`).",
		Causes: []string{
			"A misspelt flag, or a value outside its choices (`--format yaml`) — `jadpo help <command>` lists them.",
			"Too many folders given — a command takes one project folder.",
		},
	},
	"module.not_found": {
		Means: "A `use` line names a module that no file of the project is.",
		Causes: []string{
			"A misspelt path — a module is the file's path from the project folder without `.jadpo`: `stock/events.jadpo` is `stock/events`.",
			"The file is under `build/`, `packages/` or a folder starting with `.`, which are not read as modules — move it.",
		},
	},
	"module.name_not_found": {
		Means: "A `use` line brings in a name that its module does not declare.",
		Causes: []string{
			"A misspelt name — the help suggests the nearest one the module declares.",
			"The declaration lives in another module — `use` that module instead.",
		},
	},
	"module.name_not_public": {
		Means: "A `use` line brings in a declaration that its module does not mark `public`.",
		Causes: []string{
			"Mark the declaration `public` in its module: `public event OrderShipped { ... }`.",
		},
	},
	"module.duplicate_name": {
		Means: "A name is brought into a file twice, or brought in and also declared there.",
		Causes: []string{
			"Two `use` lines bring the same name — keep one.",
			"The file declares a name it also brings in — rename one, or drop the `use`.",
		},
	},
	"module.unused_name": {
		Means: "A `use` line brings in a name that its file never uses. It is a warning: the check still passes. Reported once the project has no errors.",
		Causes: []string{
			"A declaration that used the name was removed or moved — remove the name from the `use` line (the editor's quick fix does; the whole line when it was its only name).",
		},
	},
	"module.use_misplaced": {
		Means: "A `use` line comes after a declaration; `use` lines open a file.",
		Causes: []string{
			"Move every `use` line to the top of the file, before the first declaration (comments may come before them).",
		},
	},
	"module.cycle": {
		Means: "Modules `use` each other in a circle: `a` uses `b`, which uses `a`.",
		Causes: []string{
			"Two modules share types both ways — move the shared declarations into a third module both `use`.",
		},
	},
	"semantic.name_case": {
		Means: "A name is spelt in the wrong case for what it names. Types, enums, values, events, the config and packages are UpperCamelCase; fields, settings, connections, queues, subscribers, resources, operations and enum variants are lower_snake_case.",
		Causes: []string{
			"`event userSignedUp` — rename the declaration `UserSignedUp`; its uses already spelt that way then resolve.",
			"`connection Orders` — connections, queues and subscribers are lower_snake_case: `orders`.",
		},
	},
	"semantic.duplicate_name": {
		Means: "The same name or key is given twice where each must be unique: two declarations of one name in a module, two fields of one record, one member twice in a block, one argument twice in a call.",
		Causes: []string{
			"A declaration copied and not renamed — rename or remove one; the note shows the first.",
			"A member given twice in one block — keep one.",
		},
	},
	"semantic.one_per_app": {
		Means: "An app has at most one `config` and one `store`, and this is a second.",
		Causes: []string{
			"A module declares its own config — put every field in the one config; it is app-wide.",
			"Two stores for two kinds of events — one store keeps every event of the app.",
		},
	},
	"semantic.misplaced_declaration": {
		Means: "A declaration is in a file where it does not belong: a package's (`package`, `provider`, `settings`, `resource`, `provide`) in an app file, or an app's (`config`, `store`, `connection`, `queue`, `subscriber`) in a package.",
		Causes: []string{
			"Package files placed among the app's modules — install the package under `packages/` with `jadpo package add ./path`.",
			"An app declaration written into a package file — move it to `app.jadpo` or a module of the app.",
		},
	},
	"semantic.public_ignored": {
		Means: "`public` is written on a `config`, `store`, `connection`, `queue` or `subscriber`. These are app-wide: declared in `app.jadpo` or in any module, each is seen from every module of the app without `use`, so `public` on them changes nothing. It is a warning: the check still passes. `public` matters on types, enums, values and events, which other files bring in with `use`.",
		Causes: []string{
			"Written by analogy with `public event`, to use the declaration from another module — remove `public`; the editor's quick fix does, and the other module needs nothing to see it.",
		},
	},
	"type.unknown_name": {
		Means: "A type is named that is neither built in nor declared in scope.",
		Causes: []string{
			"A misspelt type — the help suggests the nearest (`Txt` → `Text`).",
			"The type is declared in another module — bring it in: `use stock/types { Sku }` (the help names the line).",
			"A lower-case built-in (`text`) — built-in types are `Text Int Decimal Bool Uuid Instant Email Url Duration`, `List<T>`, `Map<Text, T>`.",
		},
	},
	"type.constraint_invalid": {
		Means: "A rule in `{ }` after a type does not fit that type, or cannot be satisfied.",
		Causes: []string{
			"A rule on the wrong base — `min`/`max` fit Int and Decimal, `min_length`/`max_length` fit Text, Email and Url, `pattern` and `format` fit Text.",
			"`min` above `max`, or `min_length` above `max_length` — no value could fit.",
			"A pattern that does not compile as an RE2 regular expression (no back-references or look-arounds).",
			"An unknown rule name — the help lists the rules.",
		},
	},
	"type.arguments_invalid": {
		Means: "A generic type is given the wrong type arguments.",
		Causes: []string{
			"`List` without its element type — write `List<OrderLine>`.",
			"A map keyed by something other than text — maps are `Map<Text, T>`.",
			"Arguments on a type that takes none (`Text<Int>`) — remove them.",
		},
	},
	"type.cycle": {
		Means: "Type declarations refer to each other in a loop, so none has a base.",
		Causes: []string{
			"`type A = B` and `type B = A` — make one of them refine a scalar base such as `Text`.",
		},
	},
	"type.mismatch": {
		Means: "A value does not fit the type its place expects: a literal of another kind, a value outside its type's rules, or a field of another type passed as an argument.",
		Causes: []string{
			"A number where text is expected, or text where a number is — match the declared type.",
			"A literal outside the type's rules (`wait_time_seconds: 30` where the maximum is 20) — keep within them.",
			"An event's field of another type passed to an operation — pass a field of the input's type; Text takes Email, Url, Uuid and enums.",
			"A `List`, `Map` or value type on a config field — config values are single scalars.",
		},
	},
	"config.binding_required": {
		Means: "A config field does not say which environment variable it is read from.",
		Causes: []string{
			"Add `{ binding: \"NAME\" }` after the field's type; the help suggests the name.",
		},
	},
	"config.unknown_option": {
		Means: "A config field's option is not one a config field takes, or its value is ill-formed.",
		Causes: []string{
			"A misspelt option — a config field takes `binding`, `secret`, `default` and its type's rules.",
			"`secret: yes` — `secret` takes `true` or `false`.",
			"A binding that is not a variable's name (`binding: \"my var\"`) — letters, digits and `_`.",
			"A `default` that is not a literal (`default: config.other`) — give a literal of the field's type.",
		},
	},
	"config.secret_default": {
		Means: "A secret config field has a `default`; a secret's value must never be written in source.",
		Causes: []string{
			"Remove the default and give the value in the environment or `.env.local`.",
			"The value is not secret after all (a URL without a password) — drop `secret: true`.",
		},
	},
	"config.secret_flow": {
		Means: "A secret could end up where it would be shown: in an operation's argument, a setting, a host, or a password written in a store's database URL.",
		Causes: []string{
			"A secret config field passed to an operation or a setting — a secret flows only into a credential's secret members and a store's `database`.",
			"A database URL with its password in the source — read it from a secret config field: `database: config.database_url`.",
		},
	},
	"config.unused_field": {
		Means: "A config field that nothing reads: no connection, store, subscriber or other place names `config.<field>`. It is a warning: the check still passes. An unused field is still read from the environment at start (a required one must be set), and `--target workers` lists it among the Worker's `[vars]` or secrets, so it costs every run something for nothing. Reported once the project has no errors.",
		Causes: []string{
			"A field left over after the place that read it was removed — remove it; the editor's quick fix does.",
			"A field meant for a setting that was given a literal instead — write `config.<field>` there, or remove the field.",
		},
	},
	"config.unknown_field": {
		Means: "`config.<field>` names a field the app's config does not declare.",
		Causes: []string{
			"A misspelt field name — the help suggests the nearest.",
			"The field was never declared — add it to the config with its binding.",
		},
	},
	"store.value_invalid": {
		Means: "The store's `database` or `retention` cannot be used as written.",
		Causes: []string{
			"A `database` that is neither `\"postgres://...\"` nor `\"sqlite:PATH\"` — or read it from config: `database: config.database_url`.",
			"A `retention` duration out of range — each of `succeeded` and `outbox` takes `1m` to `3650d`.",
			"An unknown member — a store takes `database` and `retention`.",
		},
	},
	"event.store_required": {
		Means: "The app receives events (it has a queue or a subscriber) but declares no store to keep them in.",
		Causes: []string{
			"Add `store main { }`: it keeps events in `build/local.sqlite`, or in the database `DATABASE_URL` names.",
		},
	},
	"connection.value_invalid": {
		Means: "A connection's value is wrong, missing, unknown or of the wrong type for its package.",
		Causes: []string{
			"A setting the package declares without a default is not given — add it under `settings:` (its package's page lists them).",
			"A quoted package name (`package: \"AmazonSqs.v2012_11_05\"`) — the package is named unquoted.",
			"A credential member missing or not from config — `credential: { key_id: config.x secret: config.y }`, secret members from secret fields.",
			"No `host:` for a package without a fixed host, or a `host:` that is not an http(s) URL.",
			"A setting's value outside its type (a duration without unit, a number over its maximum).",
		},
	},
	"connection.unused": {
		Means: "A connection that no queue receives from (no `queue` of its name) and no subscriber calls (no `attempt <connection>....`). It is a warning: the check still passes. Its credentials and settings are still required at start. Reported once the project has no errors.",
		Causes: []string{
			"A queue or subscriber was removed and its connection left — remove the connection; the editor's quick fix does.",
			"The queue is named otherwise than the connection — a queue receives from the connection of its own name: `queue orders` from `connection orders`.",
		},
	},
	"receiving.invalid": {
		Means: "A queue cannot be received as written.",
		Causes: []string{
			"No connection of the queue's name — `queue orders` receives from `connection orders`.",
			"The connection's package does not provide receiving — use a package with `provides/receiving.jadpo`, such as `AmazonSqs.v2012_11_05`.",
			"No `id_at`, or an empty path — `id_at: \"id\"`.",
			"Several events without `type_at`, or an event without its `wire_name` under `type_at` — with `type_at`, each event gives `{ wire_name: \"...\" }`.",
			"An event listed that is not an event in scope — declare it, or bring it in with `use`.",
		},
	},
	"receiving.target_unsupported": {
		Means: "The build target (`--target workers`) cannot run this part of the app; the same app still builds and runs under `jadpo run`.",
		Causes: []string{
			"A queue that is not a Cloudflare queue (SQS, a SQL inbox) — a Worker consumes Cloudflare queues only.",
			"A subscriber that calls `aws_json` or sends mail — a Worker calls `json_http` operations only.",
			"A Worker setting that is not known at build time — give `queue_name`, `d1_database_name`, ... as literals or config fields with a default.",
		},
	},
	"subscriber.invalid": {
		Means: "A subscriber names something it cannot use: an event, a connection, an operation, an argument or a field.",
		Causes: []string{
			"`on` names something that is not an event in scope — check its spelling, or `use` its module.",
			"`attempt` names a connection the app does not declare, or an operation its package does not have.",
			"An argument the operation's input does not have, or a required one left out — the help lists them.",
			"A duration without its unit in `retry:` (`first_delay: 10`) — write `10s`.",
			"A subscriber with no handler — add `on Event(e) { ... }`.",
		},
	},
	"package.not_installed": {
		Means: "A connection names a package that is not under `packages/` and in `jadpo.lock`.",
		Causes: []string{
			"The package was never installed — the help gives the exact `jadpo package add` command.",
			"A version other than the one installed — name the installed version, or install the other (one version a package per app).",
		},
	},
	"package.lock_mismatch": {
		Means: "An installed package's files no longer match `jadpo.lock`, or the lock lists what is not installed (or the reverse).",
		Causes: []string{
			"A file under `packages/` was edited — reinstall it with `jadpo package add` (the catalogue's name, or the package's own folder); change a package by installing a new version.",
			"`jadpo.lock` and `packages/` were committed apart — commit both together.",
		},
	},
	"package.not_catalogue": {
		Means: "A package bears a name of the catalogue built into the toolchain, but its files are not a copy the catalogue published.",
		Causes: []string{
			"A catalogue package edited by hand — install the catalogue's copy: `jadpo package add AmazonSqs.v2012_11_05`.",
			"A package of your own named like one of the catalogue's — give it a name of its own in its `package.jadpo`.",
		},
	},
	"package.invalid": {
		Means: "A package's folder or files are not laid out as a package.",
		Causes: []string{
			"The folder is not named `<Name>.<version>` (`Packing.v1`) — install with `jadpo package add`, which names it.",
			"`package.jadpo` is missing or its header names another package.",
			"A resource file holds no `resource`, a second one, or one named other than its file — `resources/jobs.jadpo` holds `resource jobs`.",
		},
	},
	"package.provider_invalid": {
		Means: "A package's `provider` block or one of its capability mappings (`provide receiving`, `provide email`) is wrong. Reported in the package's file.",
		Causes: []string{
			"A protocol or credential scheme that does not exist, or a pair that does not go together (`Protocol.sql` goes only with `CredentialScheme.database_url`).",
			"A mapping calls an operation the package does not declare, or leaves a required input field unmapped.",
			"`messages:` not a list, or `body:`/`handle:` not text fields of each item.",
			"A driver's package lacks what the driver uses (operations or settings named in the message).",
		},
	},
	"package.operation_invalid": {
		Means: "An operation of a package's resource is declared wrongly.",
		Causes: []string{
			"`input` or `output` that is not a value (record) type.",
			"For `json_http`: a `method` unquoted or not one of `GET POST PUT PATCH DELETE` — write `method: \"POST\"`; a `path` placeholder that is not a setting.",
			"An unknown member — an operation takes `input`, `output`, `retry_safe`, `decode`, `method` and `path`.",
		},
	},
	"toolchain.not_built_yet": {
		Means: "The source asks for something the language describes but this toolchain does not build yet.",
		Causes: []string{
			"A capability other than `receiving` and `email` (`provide storage`) — remove it for now.",
		},
	},
}
