package standin

import (
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/emailfake"
)

// mail is jadpo dev's stand-in for the app's email connections (those
// whose package provides `email`): one local emailfake per connection, its
// host and token pointed at it, each mail printed instead of sent.
type mail struct {
	out     io.Writer
	shown   func(string) string // a producer's text as written on out (Options.Shown)
	token   string              // the bearer token each stand-in takes
	mu      sync.Mutex          // one mail's line at a time
	servers []*emailfake.Server
	names   []string
}

// wireEmail starts the stand-in for connection c and points its host and
// token at it, however they are written (wire's point): a literal host or
// the package's own is replaced in dev's plan, so no mail leaves the machine.
func (w *World) wireEmail(c *ir.Connection, point func(*ir.Value, string) *ir.Value) error {
	m := &w.mail
	opts := emailfake.Options{Token: m.token, Members: map[string]string{}}
	var input *ir.Record
	for _, o := range c.Operations {
		if o.Ref != c.Email.Operation {
			continue
		}
		opts.Method = o.Method
		if !strings.Contains(o.Path, "{") {
			opts.Path = o.Path
		}
		if o.Input != nil {
			input = w.Plan.RecordByID(o.Input.Name)
		}
	}
	for field, v := range c.Email.Input {
		if v.Message == "" {
			continue
		}
		member := field
		if input != nil {
			for _, f := range input.Fields {
				if f.Name == field && f.WireName != "" {
					member = f.WireName
				}
			}
		}
		opts.Members[v.Message] = member
	}
	name := c.Name
	opts.OnMail = func(mail emailfake.Mail) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.out != nil {
			// The recipient and the first line come from events: escaped
			// (OSC 52 would write the clipboard, U+202E reorder the line).
			fmt.Fprintf(m.out, "jadpo dev: mail (%s, not sent) to %s: %q — %s\n", name, m.shown(mail.To), mail.Subject, m.shown(mail.FirstLine()))
		}
	}
	srv, err := emailfake.Start("", opts)
	if err != nil {
		return fmt.Errorf("cannot start the email stand-in: %w", err)
	}
	m.servers = append(m.servers, srv)
	m.names = append(m.names, name)
	c.Host = point(c.Host, srv.URL)
	if v, ok := c.Credential[ir.MemberToken]; ok {
		c.Credential = maps.Clone(c.Credential)
		c.Credential[ir.MemberToken] = *point(&v, m.token)
	}
	return nil
}

// Email is the email stand-in of the app's connection, nil when the
// connection has none: what it took, and refusals a test asks of it.
func (w *World) Email(connection string) *emailfake.Fake {
	for i, name := range w.mail.names {
		if name == connection {
			return w.mail.servers[i].Fake
		}
	}
	return nil
}

// describe names each stand-in for dev's first line.
func (m *mail) describe() []string {
	var out []string
	for i, s := range m.servers {
		out = append(out, "email stand-in for "+m.names[i]+" on "+s.URL+" (mails are printed, not sent)")
	}
	return out
}

func (m *mail) close() {
	for _, s := range m.servers {
		_ = s.Close()
	}
}
