// Package catalogdoc writes the reference page of each package in the
// toolchain's catalogue (docs/reference/packages/<Name>.md) from what the
// checker reads of it: its provider, settings with their types and defaults,
// operations and types, and what its capability mappings do. Each page's
// example connection is checked as part of an app by the package's test, so
// a page shows what `jadpo check` accepts.
package catalogdoc

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing/fstest"
	"unicode"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/catalog"
)

// Dir is where the pages live, from the repository root.
const Dir = "docs/reference/packages"

// Regenerate is the command that rewrites the pages.
const Regenerate = "go test ./cmd/internal/catalogdoc -update"

// Pages checks an app that installs every catalogue package and gives each a
// connection (the pages' examples), and renders one page a package plus an
// index, keyed by file name. The diagnostics are the check's: any error means
// a package or an example is wrong, and no page is trusted.
func Pages() (map[string]string, diag.List) {
	names := catalog.Names()
	fsys, err := exampleApp(names)
	if err != nil {
		return nil, diag.List{{Code: diag.ToolchainProjectReadFailed, Summary: err.Error(), Severity: diag.Error}}
	}
	p := project.LoadFS(fsys)
	p.Catalogue = catalog.Builtin // as the commands hold packages to it
	p.Drivers = check.Drivers(providers.Contracts())
	refs, diags := check.DescribePackages(p)
	if diags.HasErrors() {
		return nil, diags
	}
	if res := check.Check(p); res.Diags.HasErrors() {
		return nil, res.Diags
	}
	pages := map[string]string{}
	var index strings.Builder
	index.WriteString("# The catalogue's packages\n\n")
	index.WriteString("The packages built into the toolchain, installed with `jadpo package add <Name.vVERSION>`\n")
	index.WriteString("(see [the guide](../../guide/writing-a-package.md) for a package of your own). Each page is\n")
	fmt.Fprintf(&index, "written from the package itself (`%s`); a test fails when one is stale.\n\n", Regenerate)
	index.WriteString("| package | what it is |\n|---|---|\n")
	for _, ref := range refs {
		pages[ref.Name+".md"] = page(ref)
		fmt.Fprintf(&index, "| [`%s`](%s.md) | %s |\n", ref.Name, ref.Name, firstSentence(ref.About))
	}
	pages["README.md"] = index.String()
	return pages, diags
}

// exampleApp is a project installing every catalogue package, locked, with
// the connection each page shows.
func exampleApp(names []string) (fstest.MapFS, error) {
	fsys := fstest.MapFS{}
	lock := &lockfile.Lock{}
	var config, conns strings.Builder
	for _, name := range names {
		files := catalog.Files(name)
		for path, b := range files {
			fsys["packages/"+name+"/"+path] = &fstest.MapFile{Data: b}
		}
		lock.SetFiles(name, lockfile.Digest(files), lockfile.FileDigests(files))
	}
	described := withApp(fsys, "store main {}\n")
	described.Drivers = check.Drivers(providers.Contracts()) // a driver's credential scheme is its contract's
	refs, _ := check.DescribePackages(described)
	for _, ref := range refs {
		cfg, conn := example(ref)
		config.WriteString(cfg)
		conns.WriteString(conn + "\n")
	}
	lb, err := lock.Bytes()
	if err != nil {
		return nil, err
	}
	fsys["jadpo.lock"] = &fstest.MapFile{Data: lb}
	app := "config AppConfig {\n" + config.String() + "}\n\nstore main {}\n\n" + conns.String()
	fsys["app.jadpo"] = &fstest.MapFile{Data: []byte(app)}
	return fsys, nil
}

func withApp(fsys fstest.MapFS, app string) *project.Project {
	m := fstest.MapFS{}
	for k, v := range fsys {
		m[k] = v
	}
	m["app.jadpo"] = &fstest.MapFile{Data: []byte(app)}
	p := project.LoadFS(fs.FS(m))
	// The drivers' protocols and credential schemes, as the commands give them.
	p.Drivers = check.Drivers(providers.Contracts())
	return p
}

// connectionName is the example connection's name: AmazonSqs -> amazon_sqs.
func connectionName(pkg string) string {
	name, _, _ := strings.Cut(pkg, ".")
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// example gives the config fields and the connection a page shows: every
// credential member and required setting from config.
func example(ref check.PackageReference) (config, conn string) {
	cn := connectionName(ref.Name)
	var cfg, c strings.Builder
	field := func(name, typ string, secret bool) string {
		f := cn + "_" + name
		opts := fmt.Sprintf(`binding: "%s"`, strings.ToUpper(f))
		if secret {
			opts += " secret: true"
		}
		fmt.Fprintf(&cfg, "    %s: %s { %s }\n", f, typ, opts)
		return "config." + f
	}
	fmt.Fprintf(&c, "connection %s {\n    package: %s\n", cn, ref.Name)
	if ref.Provider.Host == "" && ref.Provider.Protocol != "sql" && ownProtocol(ref.Provider.Protocol) == nil {
		fmt.Fprintf(&c, "    host: %s\n", field("host", "Url", false))
	}
	if len(ref.Credential) > 0 {
		c.WriteString("    credential: {\n")
		for _, m := range ref.Credential {
			if m.Required {
				fmt.Fprintf(&c, "        %s: %s\n", m.Name, field(m.Name, "Text", m.Secret))
			}
		}
		c.WriteString("    }\n")
	}
	var settings []string
	for _, s := range ref.Settings {
		if s.Required {
			settings = append(settings, fmt.Sprintf("        %s: %s\n", s.Name, field(s.Name, kindWord(s.Base.Kind), false)))
		}
	}
	if len(settings) > 0 {
		c.WriteString("    settings: {\n" + strings.Join(settings, "") + "    }\n")
	}
	c.WriteString("}\n")
	return cfg.String(), c.String()
}

func page(ref check.PackageReference) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", ref.Name)
	if ref.About != "" {
		fmt.Fprintf(&b, "%s\n\n", ref.About)
	}
	fmt.Fprintf(&b, "```sh\njadpo package add %s\n```\n\n", ref.Name)
	b.WriteString("This page is written from the package's files (`" + Regenerate + "`).\n\n")

	b.WriteString("## How it talks to its service\n\n")
	pr := ref.Provider
	switch pr.Protocol {
	case "aws_json":
		fmt.Fprintf(&b, "- Protocol `aws_json`: AWS's JSON protocol, each operation a POST with `X-Amz-Target: %s.<Operation>`, signed for service `%s`.\n", pr.AWSTarget, pr.AWSService)
	case "json_http":
		b.WriteString("- Protocol `json_http`: each operation an HTTP request with a JSON body, to its method and path.\n")
	case "sql":
		b.WriteString("- Protocol `sql`: no HTTP service; the receiving driver talks to a PostgreSQL database.\n")
	default:
		if dc := ownProtocol(pr.Protocol); dc != nil {
			fmt.Fprintf(&b, "- Protocol `%s`: no HTTP service; the `%s` driver, built into the toolchain, %s.\n", pr.Protocol, dc.Name, dc.ProtocolWhy)
		}
	}
	if pr.ErrorCode != "" {
		fmt.Fprintf(&b, "- A refusal's code is read from the answer's `%s`.\n", pr.ErrorCode)
	}
	switch {
	case pr.Host != "":
		fmt.Fprintf(&b, "- Host: `%s`, fixed by the package; a connection may give `host:` to point elsewhere (a local stand-in).\n", pr.Host)
	case pr.Protocol == "sql":
		b.WriteString("- No host: the database is the credential's `url`; a connection takes no `host:`.\n")
	case ownProtocol(pr.Protocol) != nil:
		fmt.Fprintf(&b, "- No host: %s; a connection takes no `host:`.\n", ownProtocol(pr.Protocol).NoHost)
	default:
		b.WriteString("- Host: the connection gives it, `host:` (a URL, text or a `Url` config field).\n")
	}
	if len(ref.Credential) > 0 {
		fmt.Fprintf(&b, "- Credential `%s`, each member a `config.<field>`:", pr.Credential)
		for i, m := range ref.Credential {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " `%s` (%s%s)", m.Name, map[bool]string{true: "required", false: "optional"}[m.Required], map[bool]string{true: ", a secret field", false: ""}[m.Secret])
		}
		b.WriteString(".\n")
	}
	b.WriteString("\n## A connection\n\nEvery credential member and every setting without a default, from config (this app checks\nclean with the package installed):\n\n")
	cfg, conn := example(ref)
	fmt.Fprintf(&b, "```jadpo\nconfig AppConfig {\n%s}\n\n%s```\n\n", cfg, conn)

	if len(ref.Settings) > 0 {
		b.WriteString("## Settings\n\nA connection gives each under `settings:`, as a literal or a `config.<field>`.\n\n")
		last := "\x00"
		for i, s := range ref.Settings {
			if s.About != last && s.About != "" {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "%s\n\n", s.About)
			}
			last = s.About
			need := "required"
			switch {
			case s.Default != nil:
				need = "default `" + literal(s.Default) + "`"
			case !s.Required:
				need = "optional"
			}
			if base := baseText(s.Base); base != strings.TrimSuffix(s.Type, "?") {
				fmt.Fprintf(&b, "- `%s`: `%s` — %s; %s.", s.Name, s.Type, base, need)
			} else {
				fmt.Fprintf(&b, "- `%s`: `%s`; %s.", s.Name, s.Type, need)
			}
			if s.TypeAbout != "" {
				fmt.Fprintf(&b, " %s", s.TypeAbout)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	if r := ref.Receiving; r != nil {
		b.WriteString("## Receiving\n\n")
		if ref.ReceivingAbout != "" {
			fmt.Fprintf(&b, "%s\n\n", ref.ReceivingAbout)
		}
		b.WriteString("A `queue` whose connection uses this package receives through this mapping.\n\n")
		receivingText(&b, r)
	}
	if e := ref.Email; e != nil {
		b.WriteString("## Sending mail\n\n")
		if ref.EmailAbout != "" {
			fmt.Fprintf(&b, "%s\n\n", ref.EmailAbout)
		}
		fmt.Fprintf(&b, "A subscriber's `attempt <connection>.send(to: ... subject: ... text: ...)` calls `%s`, %s.\n\n", e.Operation, inputText(e.Input))
	}

	if len(ref.Operations) > 0 {
		b.WriteString("## Operations\n\n")
		for _, op := range ref.Operations {
			fmt.Fprintf(&b, "### `%s`\n\n", op.Ref)
			if op.About != "" {
				fmt.Fprintf(&b, "%s\n\n", op.About)
			}
			if op.Input != "" {
				fmt.Fprintf(&b, "- Input: [`%s`](#%s).\n", op.Input, anchor(op.Input))
			}
			if op.Output != "" {
				fmt.Fprintf(&b, "- Output: [`%s`](#%s).\n", op.Output, anchor(op.Output))
			} else {
				b.WriteString("- Output: none read.\n")
			}
			if op.Method != "" {
				fmt.Fprintf(&b, "- `%s %s`", op.Method, op.Path)
				if strings.Contains(op.Path, "{") {
					b.WriteString(" (each `{name}` is that setting's value)")
				}
				b.WriteString(".\n")
			}
			if op.RetrySafe {
				b.WriteString("- Retry-safe: sent again after a transport failure.\n")
			} else {
				b.WriteString("- Not retry-safe: a transport failure is not sent again within the call.\n")
			}
			if op.Decode {
				b.WriteString("- Its answer is read by the package's own decoder, which this toolchain does not run: it can be neither mapped nor called.\n")
			}
			b.WriteString("\n")
		}
	}

	if len(ref.Events) > 0 {
		b.WriteString("## Public events\n\nCode names each as `" + strings.Split(ref.Name, ".")[0] + ".<Event>`:")
		for _, e := range ref.Events {
			fmt.Fprintf(&b, " [`%s`](#%s)", e, anchor(e))
		}
		b.WriteString(".\n\n")
	}

	if len(ref.Records) > 0 {
		b.WriteString("## Types\n\n")
		for _, name := range sortedKeys(ref.Records) {
			fmt.Fprintf(&b, "### %s\n\n| field | type | required | on the wire |\n|---|---|---|---|\n", name)
			for _, f := range ref.Records[name] {
				wire := ""
				if f.WireName != "" {
					wire = "`" + f.WireName + "`"
				}
				fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", f.Name, f.Type, map[bool]string{true: "yes", false: "no"}[f.Required], wire)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("See also: [every catalogue package](README.md), [the language reference](../language.md).\n")
	return b.String()
}

func receivingText(b *strings.Builder, r *ir.Receiving) {
	switch r.Driver {
	case "cloudflare_queues":
		b.WriteString("- `driver: cloudflare_queues`, built into the toolchain: each receive is one `messages.pull` of up to 10\n" +
			"  messages, leased for the `visibility_timeout_ms` setting; the messages kept, repeated or parked are\n" +
			"  acknowledged, and the ones the store could not take handed back for a retry, in one `messages.ack`.\n\n")
		return
	case "rabbitmq":
		b.WriteString("- `driver: rabbitmq`, built into the toolchain: consumes the `queue` with manual acknowledgements and a\n" +
			"  prefetch of what the runtime holds at once (4 batches of 10); each receive gathers up to 10 deliveries\n" +
			"  (the message's body is its AMQP body, read by the queue's `id_at` and `type_at`, not its `message-id`\n" +
			"  property), keeps or parks each, acknowledges the settled ones in as few frames as AMQP allows\n" +
			"  (`basic.ack` with `multiple`) and hands back the others (`basic.nack`, requeue), so the queue's own\n" +
			"  dead-letter exchange and delivery limit take one that keeps failing. The broker is the credential's `url`.\n\n")
		return
	case "sql_inbox":
		b.WriteString("- `driver: sql_inbox`, built into the toolchain: each receive claims up to 10 rows of the `table`\n" +
			"  (by `claim`: `row_lock`, `lease` or `advisory_lock`; with `group`, only rows whose group is the\n" +
			"  wire_name of an event the queue lists, so several queues can share one table), reads each row's\n" +
			"  columns as a JSON object (the message's body, read by the queue's `id_at` and `type_at`), keeps or\n" +
			"  parks it, and deletes the settled rows. The database is the credential's `url`.\n\n")
		return
	case "nats_jetstream":
		b.WriteString("- `driver: nats_jetstream`, built into the toolchain: each receive fetches up to 10 messages from the\n" +
			"  `stream`'s durable pull `consumer` (those there at once, else the first to come within the tick's\n" +
			"  budget, at most 5s); the messages kept, repeated or parked are acknowledged one by one once kept\n" +
			"  (JetStream has no acknowledgement of many), the others naked with `nak_delay`. The consumer's ack\n" +
			"  wait is the visibility timeout, its max deliver the dead-letter rule (docs/guide/receiving.md).\n\n")
		return
	}
	if c := r.Receive; c != nil {
		fmt.Fprintf(b, "- Receive: `%s`, %s. The messages are the answer's `%s`; each one's body is its `%s`, its handle (for acknowledging) its `%s`.\n",
			c.Operation, inputText(c.Input), r.Messages, r.Body, r.Handle)
	}
	if c := r.Acknowledge; c != nil {
		fmt.Fprintf(b, "- Acknowledge: once a message is kept (or parked), `%s`, %s.\n", c.Operation, inputText(c.Input))
	}
	if bc := r.AcknowledgeBatch; bc != nil {
		fmt.Fprintf(b, "- Acknowledge a batch: the settled messages of one receive in one `%s`, %s; the list `%s` holds an entry a message, %s. The answer's `%s` lists the entries that failed, each named by its `%s`: each is acknowledged once more on its own, and a call that fails as a whole falls back to acknowledging each message alone.\n",
			bc.Operation, inputText(bc.Input), bc.Entries, inputText(bc.Entry), bc.Failed, bc.FailedID)
		if bc.Succeeded != "" {
			fmt.Fprintf(b, "  The answer is read strictly: its `%s` lists the entries that took, each named by its `%s`; an entry named in neither list is not taken as acknowledged but acknowledged once more on its own, and counted (`jadpo_acknowledge_unanswered_entries_total`).\n",
				bc.Succeeded, bc.SucceededID)
		}
	}
	b.WriteString("\n")
}

// inputText says what each input field is given.
func inputText(in map[string]ir.Value) string {
	if len(in) == 0 {
		return "with no input"
	}
	var parts []string
	for _, k := range sortedKeys(in) {
		parts = append(parts, fmt.Sprintf("`%s` %s", k, valueText(in[k])))
	}
	return "with " + strings.Join(parts, ", ")
}

func valueText(v ir.Value) string {
	switch {
	case v.Setting != "":
		return "from the setting `" + v.Setting + "`"
	case v.Message == "handle":
		return "the message's handle"
	case v.Message == "entry_id":
		return "an id the runtime gives each entry"
	case v.Message != "":
		return "the mail's `" + v.Message + "`"
	case v.Config != "":
		return "from `config." + v.Config + "`"
	case v.Literal != nil:
		return "`" + literal(v.Literal) + "`"
	}
	return "(nothing)"
}

func literal(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if d, err := ir.ParseDuration(s); err == nil && d >= 0 && isDurationText(s) {
			return s
		}
		if isWord(s) {
			return s // an enum variant
		}
		return string(raw)
	}
	return string(raw)
}

func isDurationText(s string) bool {
	return s != "" && strings.ContainsAny(s[len(s)-1:], "smhd")
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// baseText says what a setting's resolved type accepts.
func baseText(t ir.Type) string {
	s := kindWord(t.Kind)
	if t.Kind == ir.Enum {
		s = "one of `" + strings.Join(t.Variants, "`, `") + "`"
	}
	var rules []string
	if r := t.Rules; r != nil {
		switch {
		case r.Min != nil && r.Max != nil:
			rules = append(rules, "from "+*r.Min+" to "+*r.Max)
		case r.Min != nil:
			rules = append(rules, "at least "+*r.Min)
		case r.Max != nil:
			rules = append(rules, "at most "+*r.Max)
		}
		switch {
		case r.MinLength != nil && r.MaxLength != nil:
			rules = append(rules, fmt.Sprintf("%d to %s", *r.MinLength, characters(*r.MaxLength)))
		case r.MinLength != nil:
			rules = append(rules, "at least "+characters(*r.MinLength))
		case r.MaxLength != nil:
			rules = append(rules, "at most "+characters(*r.MaxLength))
		}
		for _, p := range r.Patterns {
			rules = append(rules, "matching `"+p+"`")
		}
		if r.Format != "" {
			rules = append(rules, "format "+r.Format)
		}
	}
	if len(rules) > 0 {
		s += ", " + strings.Join(rules, ", ")
	}
	return s
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return fmt.Sprintf("%d characters", n)
}

// ownProtocol is the contract of the driver that brings protocol p, one
// its driver reaches itself with no host (a broker's URL), nil for none.
func ownProtocol(p ir.Protocol) *ir.DriverContract {
	for _, dc := range providers.Contracts() {
		if dc.Protocol == p && dc.NoHost != "" && p != ir.ProtocolSQL {
			return &dc
		}
	}
	return nil
}

func kindWord(k ir.Kind) string {
	switch k {
	case ir.Url:
		return "Url"
	case ir.Uuid:
		return "Uuid"
	case ir.Enum:
		return "Text"
	case ir.RecordK:
		return "a value"
	}
	s := string(k)
	return strings.ToUpper(s[:1]) + s[1:]
}

func anchor(s string) string { return strings.ToLower(s) }

func firstSentence(s string) string {
	s = strings.SplitN(s, "\n", 2)[0]
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
