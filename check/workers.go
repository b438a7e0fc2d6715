package check

import (
	"encoding/json"
	"slices"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
)

// TargetWorkers is `jadpo build --target workers`: a Cloudflare Worker whose
// queue consumer is handed batches (docs/design/workers.md).
const TargetWorkers = "workers"

// workersSettings are the CloudflareQueues.v4 settings the Worker's wrangler
// configuration is written from, so each must be known at build time: a
// literal, or a config field's default. The required ones must be given.
var workersSettings = []struct {
	name     string
	required bool
}{
	{"queue_name", true},
	{"max_batch_size", false},
	{"max_retries", false},
	{"dead_letter_queue", false},
	{"d1_database_name", true},
	{"d1_database_id", true},
}

// CheckTarget checks a project for a build target: the checks of Check, and
// for TargetWorkers what a Worker cannot run, reported under its own code
// (receiving.target_unsupported) at each queue, connection or subscriber.
func CheckTarget(p *project.Project, target string) Result {
	return checkFor(p, target)
}

// checkWorkers runs after every other rule, on what they accepted.
func (c *checker) checkWorkers() {
	const code = diag.ReceivingTargetUnsupported
	d1 := map[string]string{} // setting -> value, the first connection's
	for _, name := range sortedKeys(c.queues) {
		d := c.queues[name]
		cn := c.connections[name]
		if cn == nil || cn.pkg == nil || cn.pkg.receiving == nil || cn.pkg.receiving.ir == nil {
			continue // reported by the queue's own rules
		}
		if drv := cn.pkg.receiving.ir.Driver; drv != ir.DriverCloudflareQueues {
			how := "through its receiving mapping"
			if drv != "" {
				how = "by the `" + string(drv) + "` driver"
			}
			c.add(code, d.rng(), "queue `%s` cannot be consumed by a Worker: package `%s` is received %s", name, cn.ir.Package, how).
				With("target", TargetWorkers).
				WithRelated(cn.decl.rng(), "the connection is declared here").
				WithHelp("a Worker consumes Cloudflare queues (CloudflareQueues.v4); build for the native runtime (no --target) to receive this queue")
			continue
		}
		for _, s := range workersSettings {
			v, given := cn.ir.Settings[s.name]
			if !given {
				if s.required {
					c.add(code, cn.decl.rng(), "connection `%s` has no setting `%s`, which the Worker's configuration needs", name, s.name).
						With("target", TargetWorkers).
						WithHelp("give it in the connection's settings: { " + s.name + ": \"...\" }")
				}
				continue
			}
			text, known := c.buildTimeValue(v)
			if !known {
				c.add(code, cn.decl.rng(), "connection `%s`'s setting `%s` comes from config field `%s`, which has no default: the Worker's configuration is written at build time", name, s.name, v.Config).
					With("target", TargetWorkers).
					WithHelp("give the setting a literal, or give the config field a `default:`")
				continue
			}
			if s.name == "d1_database_name" || s.name == "d1_database_id" {
				if first, seen := d1[s.name]; seen && first != text {
					c.add(code, cn.decl.rng(), "connection `%s`'s setting `%s` names another D1 database than an earlier connection's: a Worker keeps events in one", name, s.name).
						With("target", TargetWorkers).
						WithHelp("give every Cloudflare connection the same d1_database_name and d1_database_id")
				}
				d1[s.name] = text
			}
		}
	}
	for _, name := range sortedKeys(c.subscribers) {
		d := c.subscribers[name]
		i := slices.IndexFunc(c.out.subscribers, func(s ir.Subscriber) bool { return s.Name == name })
		if i < 0 {
			continue
		}
		reported := map[string]bool{}
		for _, h := range c.out.subscribers[i].Handlers {
			for _, st := range h.Steps {
				cn := c.connections[st.Connection]
				if cn == nil || reported[st.Connection] {
					continue
				}
				pr := cn.ir.Provider
				switch {
				case st.Operation == "send":
					c.add(code, d.rng(), "subscriber `%s` sends email through `%s`, which the Worker does not do yet", name, st.Connection).
						With("target", TargetWorkers).
						WithHelp("under --target workers, subscribers call json_http operations with a bearer credential or none")
				case pr.Protocol != ir.ProtocolJSONHTTP || (pr.Credential != "" && pr.Credential != ir.CredentialBearer):
					c.add(code, d.rng(), "subscriber `%s` calls `%s` over %s, which the Worker does not speak yet", name, st.Connection, protocolWords(pr)).
						With("target", TargetWorkers).
						WithRelated(cn.decl.rng(), "the connection is declared here").
						WithHelp("under --target workers, subscribers call json_http operations with a bearer credential or none; build for the native runtime (no --target) otherwise")
				default:
					continue
				}
				reported[st.Connection] = true
			}
		}
	}
}

func protocolWords(p ir.Provider) string {
	if p.Credential != "" {
		return string(p.Protocol) + " with " + string(p.Credential)
	}
	return string(p.Protocol)
}

// buildTimeValue is a setting's value as text when the build knows it.
func (c *checker) buildTimeValue(v ir.Value) (string, bool) {
	raw := v.Literal
	if v.Config != "" {
		cf := c.configs[v.Config]
		if cf == nil || cf.ir.Default == nil {
			return "", false
		}
		raw = cf.ir.Default
	}
	if raw == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return string(raw), true
}
