// Package projectgen writes a large, realistic .jadpo project for benchmarks
// and for tests that want volume: an app.jadpo with its `use` lines, a
// config, one store, connections, queues and subscribers; many modules full
// of refined types, enums, values and public events; and one installed
// package (package.jadpo, resources, provides/receiving.jadpo) recorded in
// jadpo.lock.
//
// The output depends only on the requested size, so two runs produce the
// same bytes. Everything is in the syntax of the language reference and is
// meant to be valid under its rules too (names resolve, events are in scope,
// rules fit their bases, the secret flows only into a credential), so the
// checker's full work is measured, not its early exits (check's
// TestGenerateChecksClean holds it to that).
//
// It lives in lang/ because it writes source, and every user is at or after
// lang in the one-way flow: lang/parser's tests and its comparison module,
// check's tests and benchmarks, the language server's benchmark in
// cmd/internal/lsp and cmd/projectgen below. It imports lang only (the lock
// format), never check, so none of them depends backwards. It is not
// internal: Go's rule would keep it from check/ and cmd/.
package projectgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/jadpo/jadpo/lang/lockfile"
)

// PackageDir is the installed package's directory name under packages/.
const PackageDir = "Relay.v1"

// Generate returns a project of about `lines` lines in total (at least a
// few hundred: the app, the shared module and the package are always there).
func Generate(lines int) fstest.MapFS {
	g := newGen(lines)
	return g.fs
}

// GenerateBytes returns a project of about size bytes of .jadpo source
// (within a few percent), for memory and time measured against the input.
func GenerateBytes(size int) fstest.MapFS {
	lines := size / 30
	fsys := Generate(lines)
	if got := Bytes(fsys); got > 0 {
		fsys = Generate(int(float64(lines) * float64(size) / float64(got)))
	}
	return fsys
}

// WriteDir writes Generate(lines) under dir, creating it as needed.
func WriteDir(dir string, lines int) error {
	fsys := Generate(lines)
	names := make([]string, 0, len(fsys))
	for name := range fsys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, fsys[name].Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Lines counts the lines of every file in fsys (a last line without a
// newline counts too).
func Lines(fsys fstest.MapFS) int {
	n := 0
	for _, f := range fsys {
		n += strings.Count(string(f.Data), "\n")
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			n++
		}
	}
	return n
}

// Bytes is the total size of fsys's .jadpo files.
func Bytes(fsys fstest.MapFS) int {
	n := 0
	for name, f := range fsys {
		if strings.HasSuffix(name, ".jadpo") {
			n += len(f.Data)
		}
	}
	return n
}

// Files lists fsys's .jadpo files in a stable order.
func Files(fsys fstest.MapFS) []string {
	var names []string
	for name := range fsys {
		if strings.HasSuffix(name, ".jadpo") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

var _ fs.FS = fstest.MapFS{}

// ---------------------------------------------------------------------------

var domains = []string{
	"orders", "billing", "shipping", "inventory", "catalog", "customers", "payments",
	"returns", "pricing", "loyalty", "support", "fulfillment", "procurement", "warehouse",
	"marketing", "accounts", "invoicing", "subscriptions", "reviews", "notifications",
}

var entities = []string{
	"order", "invoice", "parcel", "product", "customer", "payment", "refund", "coupon",
	"ticket", "shipment", "supplier", "basket", "voucher", "review", "account", "contract",
	"quote", "batch", "pallet", "route", "claim", "budget", "campaign", "device", "ledger",
	"mandate", "offer", "plan", "receipt", "outlet",
}

var verbs = []string{
	"Created", "Updated", "Approved", "Rejected", "Cancelled", "Completed", "Expired",
	"Renewed", "Archived", "Restored", "Assigned", "Escalated", "Reopened", "Merged",
	"Verified", "Flagged", "Scheduled", "Delayed", "Delivered", "Submitted", "Confirmed",
	"Suspended", "Resumed", "Transferred", "Priced", "Counted", "Reserved", "Released",
	"Exported", "Imported",
}

var nouns = []string{
	"line", "note", "tag", "step", "charge", "discount", "adjustment", "entry", "slot",
	"item", "fee", "hold", "share", "check", "part", "mark",
}

var statuses = [][]string{
	{"draft", "active", "suspended", "closed", "archived"},
	{"pending", "running", "succeeded", "failed"},
	{"new", "open", "waiting", "resolved"},
}

var channels = []string{"web", "mobile", "store", "partner", "phone", "email"}

// module is one generated module: its path, its name prefix and the events
// the app receives from it.
type module struct {
	path   string // billing/invoice
	domain string
	entity string
	prefix string   // BillingInvoice
	events []string // BillingInvoiceCreated, ...
	ref    string   // BillingInvoiceRef, its public value
}

// eventsPerModuleInApp is how many of each module's events the app receives.
const eventsPerModuleInApp = 3

type gen struct {
	fs   fstest.MapFS
	rng  *rand.Rand
	mods []*module
}

func newGen(lines int) *gen {
	g := &gen{fs: fstest.MapFS{}, rng: rand.New(rand.NewPCG(0x6a6164706f, 0x62656e6368))}
	n := lines / 400
	if n < 3 {
		n = 3
	}
	if n > 200 {
		n = 200
	}
	for i := 0; i < n; i++ {
		d := domains[i%len(domains)]
		e := entities[(i/len(domains)+3*(i%len(domains)))%len(entities)]
		m := &module{path: d + "/" + e, domain: d, entity: e, prefix: camel(d) + camel(e)}
		m.ref = m.prefix + "Ref"
		for k := 0; k < eventsPerModuleInApp; k++ {
			m.events = append(m.events, m.prefix+verbs[k])
		}
		g.mods = append(g.mods, m)
	}
	g.put("shared/common.jadpo", sharedModule)
	g.writePackage()
	g.writeApp()
	used := Lines(g.fs)
	per := (lines - used) / n
	for i, m := range g.mods {
		g.writeModule(i, m, per)
	}
	return g
}

func (g *gen) put(name, content string) {
	g.fs[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
}

func camel(snake string) string {
	var b strings.Builder
	for _, part := range strings.Split(snake, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

func snake(camelName string) string {
	var b strings.Builder
	for i, r := range camelName {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// w builds one file and counts its lines.
type w struct {
	b     strings.Builder
	lines int
}

func (x *w) line(format string, args ...any) {
	if len(args) == 0 {
		x.b.WriteString(format)
	} else {
		fmt.Fprintf(&x.b, format, args...)
	}
	x.b.WriteByte('\n')
	x.lines++
}

func (x *w) blank() { x.line("") }

// ---------------------------------------------------------------------------
// The shared module: public types every domain module uses.

const sharedModule = `// Types every domain shares. Only public declarations can be used from
// another file, so each of these is public.
public type CountryCode = Text { pattern: "[A-Z]{2}" }
public type EmailAddress = Email { max_length: 254 }
public type Percentage = Decimal { min: 0 max: 100 }
public type PositiveAmount = Decimal { min: 0 }
public type WebLink = Url { max_length: 2048 }

public enum Currency { eur usd gbp chf jpy sek }

public value Money {
    amount: PositiveAmount
    currency: Currency
}

public value Address {
    line1: Text { min_length: 1 max_length: 200 }
    line2: Text? { max_length: 200 }
    city: Text { max_length: 100 }
    postal_code: Text { pattern: "[A-Z0-9 -]{2,12}" }
    country: CountryCode
}

public value Actor {
    actor_id: Uuid
    email: EmailAddress?
    display_name: Text? { max_length: 120 }
}
`

// ---------------------------------------------------------------------------
// The package: Relay.v1, a hosted job and message relay with a JSON HTTP API.

const packageHeader = `// Relay: a hosted job and message relay with a JSON HTTP API.
package Relay.v1

provider {
    protocol: Protocol.json_http
    credential: CredentialScheme.bearer
    error_code: "error.code"
}

settings {
    account_id: Text
    queue_id: Text
    batch_size: BatchSize { default: 10 }
    visibility_timeout_ms: VisibilityTimeout { default: 30000 }
}

type BatchSize = Int { min: 1 max: 100 }
type VisibilityTimeout = Int { min: 1000 max: 43200000 }

public event JobFailed {
    job_id: Text
    failed_at: Instant
    reason: Text? { max_length: 500 }
    attempts: Int { min: 0 }
}

public event JobCompleted {
    job_id: Text
    completed_at: Instant
    duration: Duration?
    output: Map<Text, Text>?
}
`

const packageMessages = `// Pull consumer of a relay queue.
resource messages {
    operation pull_messages {
        input: PullMessagesInput
        output: PullMessagesOutput
        method: "POST"
        path: "/accounts/{account_id}/queues/{queue_id}/messages/pull"
        retry_safe: true
    }
    operation ack_message {
        input: AckMessageInput
        method: "POST"
        path: "/accounts/{account_id}/queues/{queue_id}/messages/ack"
    }
}

value PullMessagesInput {
    batch_size: Int? { min: 1 max: 100 }
    visibility_timeout_ms: Int? { min: 1000 }
}

value PullMessagesOutput {
    messages: List<PulledMessage>
}

value PulledMessage {
    id: Text
    body: Text
    lease_id: Text
    timestamp_ms: Int { min: 0 }
    attempts: Int { min: 0 }
    metadata: Map<Text, Text>?
}

value AckMessageInput {
    lease_id: Text
}
`

const packageJobs = `// Jobs: work the relay runs on the app's behalf.
resource jobs {
    operation create_job {
        input: CreateJobInput
        output: Job
        method: "POST"
        path: "/accounts/{account_id}/jobs"
    }
    operation cancel_job {
        input: CancelJobInput
        method: "DELETE"
        path: "/accounts/{account_id}/jobs"
    }
    operation get_job {
        input: GetJobInput
        output: Job
        method: "GET"
        path: "/accounts/{account_id}/jobs"
        retry_safe: true
    }
}

value Label {
    reference: Text
    account: Text
}

value CreateJobInput {
    kind: Text { min_length: 1 max_length: 64 }
    reference: Text
    payload: Text
    source: Text?
    priority: Int? { min: 1 max: 5 }
    label: Label?
    tags: List<Text>?
}

value CancelJobInput {
    job_id: Text
}

value GetJobInput {
    job_id: Text
}

value Job {
    job_id: Text { wire_name: "jobId" }
    state: Text
    created_at: Instant { wire_name: "createdAt" }
}
`

const packageWebhooks = `// Webhooks the relay calls; nothing in the app uses them, so a check never
// loads this file.
resource webhooks {
    operation register_webhook {
        input: RegisterWebhookInput
        output: Webhook
        method: "POST"
        path: "/accounts/{account_id}/webhooks"
    }
    operation delete_webhook {
        input: DeleteWebhookInput
        method: "DELETE"
        path: "/accounts/{account_id}/webhooks"
    }
}

value RegisterWebhookInput {
    url: Url
    events: List<Text>
    secret_header: Text? { wire_name: "secretHeader" }
}

value DeleteWebhookInput {
    webhook_id: Text
}

value Webhook {
    webhook_id: Text
    url: Url
}
`

const packageReceiving = `// How the relay's queues are received: pull, then acknowledge each message.
provide receiving {
    receive: {
        call: messages.pull_messages
        input: {
            batch_size: settings.batch_size
            visibility_timeout_ms: settings.visibility_timeout_ms
        }
        messages: response.messages
        body: item.body
        handle: item.lease_id
    }
    acknowledge: {
        call: messages.ack_message
        input: { lease_id: message.handle }
    }
}
`

func (g *gen) writePackage() {
	root := "packages/" + PackageDir + "/"
	g.put(root+"package.jadpo", packageHeader)
	g.put(root+"resources/messages.jadpo", packageMessages)
	g.put(root+"resources/jobs.jadpo", packageJobs)
	g.put(root+"resources/webhooks.jadpo", packageWebhooks)
	g.put(root+"provides/receiving.jadpo", packageReceiving)

	// jadpo.lock records the package and the digest of its files, as
	// `jadpo package add ./packages/Relay.v1` would.
	files := map[string][]byte{}
	for name, f := range g.fs {
		if rel, ok := strings.CutPrefix(name, root); ok {
			files[rel] = f.Data
		}
	}
	var lock strings.Builder
	lock.WriteString("# jadpo.lock: the packages installed under packages/ and the sha256 of their files.\n")
	lock.WriteString("# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.\n")
	lock.WriteString(PackageDir + " " + lockfile.Digest(files) + "\n")
	paths := make([]string, 0, len(files))
	for rel := range files {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	for _, rel := range paths {
		sum := sha256.Sum256(files[rel])
		lock.WriteString("  " + rel + " sha256:" + hex.EncodeToString(sum[:]) + "\n")
	}
	g.put(lockfile.FileName, lock.String())
}

// ---------------------------------------------------------------------------
// app.jadpo

func (g *gen) writeApp() {
	var x w
	x.line("// The shop: receives every domain's events from its relay queue, keeps each")
	x.line("// once in the events' store, and hands them to the subscribers below.")
	for _, m := range g.mods {
		x.line("use %s { %s }", m.path, strings.Join(m.events, ", "))
	}
	x.blank()

	// One queue per domain in use.
	var queues []string
	byDomain := map[string][]*module{}
	for _, m := range g.mods {
		if byDomain[m.domain] == nil {
			queues = append(queues, m.domain)
		}
		byDomain[m.domain] = append(byDomain[m.domain], m)
	}

	x.line("config ShopConfig {")
	x.line(`    database_url: Text { binding: "DATABASE_URL" default: "sqlite:build/local.sqlite" }`)
	x.line(`    relay_host: Url { binding: "RELAY_HOST" default: "https://relay.example.com" }`)
	x.line(`    relay_api_token: Text { binding: "RELAY_API_TOKEN" secret: true }`)
	x.line(`    relay_account: Text { binding: "RELAY_ACCOUNT" }`)
	x.line(`    service_name: Text { binding: "SERVICE_NAME" default: "shop" }`)
	for _, d := range queues {
		x.line(`    %s_queue_id: Text { binding: "%s_QUEUE_ID" }`, d, strings.ToUpper(d))
	}
	x.line("}")
	x.blank()
	x.line("store primary {")
	x.line("    database: config.database_url")
	x.line("}")
	x.blank()

	x.line("connection relay_api {")
	x.line("    package: %s", PackageDir)
	x.line("    host: config.relay_host")
	x.line("    credential: { token: config.relay_api_token }")
	x.line(`    settings: { account_id: config.relay_account queue_id: "jobs" }`)
	x.line("}")
	x.blank()
	for i, d := range queues {
		x.line("connection %s_queue {", d)
		x.line("    package: %s", PackageDir)
		x.line("    host: config.relay_host")
		x.line("    credential: {")
		x.line("        token: config.relay_api_token")
		x.line("    }")
		x.line("    settings: {")
		x.line("        account_id: config.relay_account")
		x.line("        queue_id: config.%s_queue_id", d)
		if i%2 == 0 {
			x.line("        batch_size: %d", 10+5*(i%10))
		}
		x.line("    }")
		x.line("}")
		x.blank()
	}

	for i, d := range queues {
		x.line("queue %s_queue {", d)
		x.line(`    id_at: "id"`)
		x.line(`    type_at: "meta.type"`)
		x.line("    events: {")
		for _, m := range byDomain[d] {
			for _, e := range m.events {
				x.line(`        %s { wire_name: "%s" }`, e, snake(e))
			}
		}
		if i == 0 {
			x.line(`        Relay.JobFailed { wire_name: "relay.job_failed" }`)
			x.line(`        Relay.JobCompleted { wire_name: "relay.job_completed" }`)
		}
		x.line("    }")
		x.line("}")
		x.blank()
	}

	for i, m := range g.mods {
		x.line("subscriber sync_%s_%s {", m.domain, m.entity)
		for k, e := range m.events {
			b := m.entity
			if k > 0 {
				b = fmt.Sprintf("%s_%d", m.entity, k+1)
			}
			x.line("    on %s(%s) {", e, b)
			switch (i + k) % 3 {
			case 0:
				x.line("        attempt relay_api.jobs.create_job(")
				x.line(`            kind: "%s",`, snake(e))
				x.line("            reference: %s.%s_id,", b, m.entity)
				x.line("            payload: json(%s),", b)
				x.line("            source: config.service_name,")
				x.line(`            tags: ["%s", "%s"]`, m.domain, m.entity)
				x.line("        )")
			case 1:
				x.line(`        attempt relay_api.jobs.create_job(kind: "%s" reference: %s.%s_id payload: json(%s) priority: %d)`,
					snake(e), b, m.entity, b, 1+(i%5))
			default:
				x.line("        attempt relay_api.jobs.create_job(")
				x.line(`            kind: "%s"`, snake(e))
				x.line("            reference: %s.%s_id", b, m.entity)
				x.line("            payload: json(%s)", b)
				x.line("            label: { reference: %s.%s_id account: config.relay_account }", b, m.entity)
				x.line("        )")
			}
			x.line("    }")
		}
		if i%2 == 0 {
			x.line("    retry: { max_attempts: %d first_delay: %ds max_delay: %dh }", 5+i%6, 5+5*(i%4), 1+i%3)
		}
		x.line("}")
		x.blank()
	}
	g.put("app.jadpo", x.b.String())
}

// ---------------------------------------------------------------------------
// Modules

// scalar is a declared scalar type of a module and what may refine it.
type scalar struct {
	name string
	base string // its root base: Text, Int, ...
}

func (g *gen) writeModule(i int, m *module, budget int) {
	r := g.rng
	var x w
	x.line("// %s: what the %s service publishes about each %s.", m.path, m.domain, m.entity)
	x.line("use shared/common { Money, Address, Actor, CountryCode, Currency }")
	var prev *module
	if i > 0 && i%3 != 0 {
		prev = g.mods[i-1]
		x.line("use %s { %sId, %s }", prev.path, prev.prefix, prev.ref)
	}
	x.blank()

	p := m.prefix
	scalars := []scalar{
		{p + "Code", "Text"}, {p + "Count", "Int"}, {p + "Amount", "Decimal"},
		{p + "Ratio", "Decimal"}, {p + "Label", "Text"}, {p + "ShortLabel", "Text"},
		{p + "At", "Instant"}, {p + "Contact", "Email"}, {p + "Link", "Url"},
		{p + "Key", "Uuid"}, {p + "Window", "Duration"}, {p + "Flag", "Bool"},
	}
	x.line("public type %sId = Text { min_length: 1 max_length: 64 }", p)
	x.line(`type %sCode = Text { pattern: "[A-Z]{3}-[0-9]{%d}" }`, p, 3+i%4)
	x.line("type %sCount = Int { min: 0 max: %d }", p, 1000*(1+i%50))
	x.line("type %sAmount = Decimal { min: 0 }", p)
	x.line("type %sRatio = Decimal { min: 0 max: 1 }", p)
	x.line("type %sLabel = Text { min_length: 1 max_length: 120 }", p)
	x.line("type %sShortLabel = %sLabel { max_length: 40 }", p, p)
	x.line("type %sAt = Instant", p)
	x.line("type %sContact = Email { max_length: 254 }", p)
	x.line("type %sLink = Url", p)
	x.line("type %sKey = Uuid", p)
	x.line("type %sWindow = Duration", p)
	x.line("type %sFlag = Bool", p)
	x.blank()
	st := statuses[i%len(statuses)]
	x.line("enum %sStatus { %s }", p, strings.Join(st, " "))
	x.line("enum %sChannel {", p)
	for _, c := range channels[:3+i%4] {
		x.line("    %s", c)
	}
	x.line("}")
	x.blank()
	x.line("public value %s {", m.ref)
	x.line("    %s_id: %sId", m.entity, p)
	x.line("    code: %sCode", p)
	x.line("}")
	x.blank()

	// Groups: a refinement, maybe an enum, a value and an event, until the
	// budget is spent; the first events are the ones the app receives.
	for k := 0; k < maxGroups && (k < eventsPerModuleInApp || x.lines < budget-4); k++ {
		// Past the verbs, names go on with a number: ...Created2.
		verb := verbs[k%len(verbs)]
		if k >= len(verbs) {
			verb += fmt.Sprint(k/len(verbs) + 1)
		}
		noun := nouns[(i+k)%len(nouns)]
		valueName := p + verb + camel(noun)
		eventName := p + verb

		// A refinement of one of the module's scalars.
		s := scalars[r.IntN(len(scalars))]
		refined := p + verb + "Value"
		switch s.base {
		case "Text", "Email", "Url":
			x.line("type %s = %s { max_length: %d }", refined, s.name, 20+r.IntN(200))
		case "Int", "Decimal":
			if s.name == p+"Ratio" { // 0 to 1
				x.line("type %s = %s { max: 0.%d }", refined, s.name, 1+r.IntN(9))
			} else {
				x.line("type %s = %s { min: %d }", refined, s.name, r.IntN(10))
			}
		default:
			x.line("type %s = %s", refined, s.name)
		}
		if k%3 == 1 {
			x.line("enum %s%sReason { %s }", p, verb, strings.Join(reasons(r), " "))
		}
		x.blank()

		x.line("value %s {", valueName)
		x.line("    %s_id: %sKey", noun, p)
		x.line("    position: Int { min: 0 }")
		x.line("    value: %s", refined)
		x.line("    price: Money?")
		if r.IntN(2) == 0 {
			x.line("    ratio: %sRatio?", p)
		}
		if r.IntN(2) == 0 {
			x.line("    labels: Map<Text, %sShortLabel>", p)
		}
		x.line("}")
		x.blank()

		x.line("public event %s {", eventName)
		x.line("    %s_id: %sId", m.entity, p)
		x.line("    occurred_at: %sAt", p)
		x.line("    status: %sStatus", p)
		fields := eventFields(r, p, valueName, k)
		for _, f := range fields {
			x.line("    %s", f)
		}
		if prev != nil && r.IntN(2) == 0 {
			x.line("    %s: %s?", snake(prev.ref), prev.ref)
			x.line("    %s_id: %sId?", prev.entity+"_source", prev.prefix)
		}
		if k%3 == 1 {
			x.line("    reason: %s%sReason?", p, verb)
		}
		x.line("}")
		x.blank()
	}
	g.put(m.path+".jadpo", x.b.String())
}

var reasonWords = []string{
	"duplicate", "fraud", "customer_request", "timeout", "out_of_stock", "address_invalid",
	"payment_failed", "expired", "manual", "system", "policy", "other",
}

// maxGroups bounds a module's groups, and so its size: some 40 bytes a
// line, 25 lines a group, about 4 MB, under the per-file limit of 8 MiB.
const maxGroups = 4000

func reasons(r *rand.Rand) []string {
	n := 3 + r.IntN(4)
	start := r.IntN(len(reasonWords))
	out := make([]string, 0, n)
	for j := 0; j < n; j++ {
		out = append(out, reasonWords[(start+j)%len(reasonWords)])
	}
	return out
}

// eventFields picks the optional part of an event's fields.
func eventFields(r *rand.Rand, p, valueName string, k int) []string {
	pool := []string{
		fmt.Sprintf("lines: List<%s>", valueName),
		"total: Money",
		"shipping_address: Address?",
		"changed_by: Actor",
		fmt.Sprintf("channel: %sChannel", p),
		"country: CountryCode",
		"currency: Currency?",
		"note: Text? { max_length: 500 }",
		fmt.Sprintf("contact: %sContact?", p),
		fmt.Sprintf("count: %sCount { max: 500 }", p),
		fmt.Sprintf("amount: %sAmount?", p),
		fmt.Sprintf(`external_ref: Text { wire_name: "ExternalRef%d" max_length: 80 }`, k),
		fmt.Sprintf("attributes: Map<Text, %sLabel>?", p),
		"tags: List<Text>",
		fmt.Sprintf("window: %sWindow?", p),
		fmt.Sprintf("link: %sLink?", p),
		fmt.Sprintf("flagged: %sFlag", p),
		"score: Decimal? { min: 0 max: 10 }",
		"attempt: Int { min: 1 max: 20 }",
		fmt.Sprintf("history: List<Map<Text, %sShortLabel>>?", p),
		fmt.Sprintf(`code: %sCode { wire_name: "Code" }`, p),
	}
	n := 6 + r.IntN(6)
	perm := r.Perm(len(pool))[:n]
	sort.Ints(perm)
	out := make([]string, n)
	for j, idx := range perm {
		out[j] = pool[idx]
	}
	return out
}
