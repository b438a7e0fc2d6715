package check

import (
	"strings"
	"time"

	"github.com/jadpo/jadpo/lang/ast"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/diag"
)

// checkStore checks the store's database. Without a store, every receiving
// declaration is reported by its own check (event.store_required).
func (c *checker) checkStore() {
	d := c.store
	if d == nil {
		return
	}
	b := d.node.Named.BlockDecl.Body
	ms := c.members(d.file, b, diag.StoreValueInvalid, "in a store", blockKeys["store"]...)
	c.out.store = &ir.Store{Name: d.name, Retention: ir.Retention{
		SucceededMS: DefaultKeepSucceeded.Milliseconds(), OutboxMS: DefaultKeepOutbox.Milliseconds()}}
	if rm := ms["retention"]; rm != nil {
		c.checkRetention(d, rm, &c.out.store.Retention)
	}
	m := ms["database"]
	if m == nil {
		return
	}
	if _, _, ok := configRef(m.Value); ok {
		cf := c.useConfig(d.file, m.Value, true, "a store's database")
		if cf == nil {
			return
		}
		if cf.ir.Type.Kind != ir.Text && cf.ir.Type.Kind != ir.Url {
			c.add(diag.StoreValueInvalid, d.file.Range(m.Value.Span()), "`database` takes a URL as text; config field `%s` is %s", cf.ir.Name, describe(cf.ir.Type))
			return
		}
		c.out.store.Database = &ir.Value{Config: cf.ir.Name}
		return
	}
	if m.Value.Text == nil {
		c.add(diag.StoreValueInvalid, d.file.Range(m.Value.Span()), "`database` takes a text or a config field").
			WithHelp(`database: "sqlite:build/local.sqlite", database: "postgres://host/db", or database: config.database_url`)
		return
	}
	v := m.Value.TextValue()
	if !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") && !(strings.HasPrefix(v, "sqlite:") && len(v) > len("sqlite:")) {
		c.add(diag.StoreValueInvalid, d.file.Range(m.Value.Span()), "`database` is neither a `postgres://` URL nor `sqlite:` and a path").
			WithHelp(`database: "sqlite:build/local.sqlite", or a postgres:// URL from config`)
		return
	}
	if strings.Contains(v, "@") && strings.Contains(strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(v, "postgresql://"), "postgres://"), "@", 2)[0], ":") {
		c.add(diag.ConfigSecretFlow, d.file.Range(m.Value.Span()), "the database URL holds a password in the source").
			WithHelp("read it from a secret config field: database: config.database_url")
		return
	}
	c.out.store.Database = &ir.Value{Literal: rawJSON(v)}
}

// The retention defaults, as runtime/store's (store.DefaultKeepSucceeded and
// DefaultKeepOutbox; a test holds them equal): a day, as River keeps completed
// jobs, so the store holds about a day of traffic.
const (
	DefaultKeepSucceeded = 24 * time.Hour
	DefaultKeepOutbox    = 24 * time.Hour
	// A retention under a minute would delete rows an operator has not had
	// time to look at; over ten years is a mistake of unit.
	minRetention = time.Minute
	maxRetention = 3650 * 24 * time.Hour
)

// checkRetention reads `retention: { succeeded: 1d outbox: 1d }`.
func (c *checker) checkRetention(d *decl, m *ast.Member, r *ir.Retention) {
	blk := c.blockValue(d.file, m, diag.StoreValueInvalid)
	if blk == nil {
		return
	}
	ms := c.members(d.file, blk, diag.StoreValueInvalid, "in `retention`", blockKeys["store retention"]...)
	for _, k := range []string{"succeeded", "outbox"} {
		mm := ms[k]
		if mm == nil {
			continue
		}
		n, ok := durationMS(mm.Value)
		if !ok || n < minRetention.Milliseconds() || n > maxRetention.Milliseconds() {
			c.add(diag.StoreValueInvalid, d.file.Range(mm.Value.Span()), "`%s` takes a duration from 1m to 3650d", k).
				WithHelp("such as `succeeded: 1d` or `outbox: 7d`; received ids are kept 30 days whatever the retention")
			continue
		}
		if k == "succeeded" {
			r.SucceededMS = n
		} else {
			r.OutboxMS = n
		}
	}
}

// needStore reports a receiving declaration in an app without a store.
func (c *checker) needStore(d *decl, what string) bool {
	if c.store != nil {
		return true
	}
	c.add(diag.EventStoreRequired, d.rng(), "%s `%s` receives events, but the app has no store to keep them in", what, d.name).
		WithHelp("declare one: store primary { } keeps events in build/local.sqlite, or in DATABASE_URL when it is set")
	return false
}
