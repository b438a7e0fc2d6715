package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/jadpo/jadpo/check/ir"
)

// The service stand-in's calls (docs/guide/when-something-fails.md): each call it takes is
// printed (method, path, headers with secrets redacted, body) to Options.Calls, and it can
// be told to answer a status instead of its sample, for an operation or for a subscriber
// (the operations that subscriber's handlers call), so that retries, a give-up and
// `jadpo deliveries retry` can be watched on this machine.

// MaxShownBody is the most of a call's body a printed call shows.
const MaxShownBody = 2048

// calls is the service stand-in's record of what to answer and where to print.
type calls struct {
	out     io.Writer
	escape  func(string) string // Options.Shown; nil: control and format characters quoted
	mu      sync.Mutex
	answers map[string]*answer // by connection.resource.operation
}

// answer is a status the stand-in gives an operation's calls instead of its sample:
// left more times, or every time when left is 0.
type answer struct {
	status int
	left   int
}

// route is one json_http operation the stand-in answers.
type route struct {
	target string // connection.resource.operation
	method string
	re     *regexp.Regexp
	output *ir.Type
}

// servicesRoutes are the routes of every json_http operation of the plan.
func servicesRoutes(p *ir.Program) []route {
	var routes []route
	for _, c := range p.Connections {
		if c.Provider.Protocol != ir.ProtocolJSONHTTP || c.Email != nil {
			continue
		}
		for _, o := range c.Operations {
			pattern := "^" + regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(regexp.QuoteMeta(o.Path), `[^/]+`) + "$"
			routes = append(routes, route{c.Name + "." + o.Ref, o.Method, regexp.MustCompile(pattern), o.Output})
		}
	}
	return routes
}

// AnswerTargets are what Answer takes: each subscriber whose handlers call a service, and
// each service operation (connection.resource.operation), sorted.
func (w *World) AnswerTargets() []string {
	out := sortedKeys(w.subscriberOps())
	for _, r := range servicesRoutes(w.Plan) {
		out = append(out, r.target)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// subscriberOps are the service operations each subscriber's handlers call.
func (w *World) subscriberOps() map[string][]string {
	known := map[string]bool{}
	for _, r := range servicesRoutes(w.Plan) {
		known[r.target] = true
	}
	out := map[string][]string{}
	for _, s := range w.Plan.Subscribers {
		for _, h := range s.Handlers {
			for _, st := range h.Steps {
				if t := st.Connection + "." + st.Operation; known[t] && !slices.Contains(out[s.Name], t) {
					out[s.Name] = append(out[s.Name], t)
				}
			}
		}
	}
	return out
}

// Answer tells the service stand-in to answer status to the calls of target (a
// subscriber, meaning every service operation its handlers call, or an operation as
// connection.resource.operation) the next times calls, or every call when times is 0;
// status 0 goes back to the sample answers. It says what it set, for a line to print; an
// unknown target or a status that is not an HTTP status is an error naming what is known.
// Only the stand-in that answers with samples takes it (not Options.Services).
func (w *World) Answer(target string, status, times int) (string, error) {
	if w.calls.answers == nil {
		return "", fmt.Errorf("the services are answered by a handler of the test's, not the stand-in")
	}
	if status != 0 && (status < 200 || status > 599) {
		return "", fmt.Errorf("%d is not an HTTP status to answer: give one from 200 to 599, or ok for the sample answers", status)
	}
	if times < 0 {
		return "", fmt.Errorf("the number of calls to answer is %d: give a positive number, or none for every call", times)
	}
	var ops []string
	if subOps, ok := w.subscriberOps()[target]; ok {
		ops = subOps
	} else if slices.Contains(w.AnswerTargets(), target) {
		ops = []string{target}
	} else {
		known := w.AnswerTargets()
		if len(known) == 0 {
			return "", fmt.Errorf("the app calls no json_http service, so there is nothing to answer")
		}
		return "", fmt.Errorf("no subscriber or service operation %q; the stand-in answers: %s", target, strings.Join(known, ", "))
	}
	w.calls.mu.Lock()
	defer w.calls.mu.Unlock()
	for _, op := range ops {
		if status == 0 {
			delete(w.calls.answers, op)
		} else {
			w.calls.answers[op] = &answer{status: status, left: times}
		}
	}
	what := strings.Join(ops, ", ")
	switch {
	case status == 0:
		return fmt.Sprintf("%s: answered with samples again", what), nil
	case times == 0:
		return fmt.Sprintf("%s: every call answered %d until `/answer %s ok`", what, status, target), nil
	case times == 1:
		return fmt.Sprintf("%s: the next call answered %d, then samples again", what, status), nil
	}
	return fmt.Sprintf("%s: the next %d calls answered %d, then samples again", what, times, status), nil
}

// take is the status to answer a call of target with: 0 for the sample; and how many such
// answers are left after it (-1: every call).
func (c *calls) take(target string) (status, left int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.answers[target]
	if a == nil {
		return 0, 0
	}
	if a.left == 0 {
		return a.status, -1
	}
	a.left--
	if a.left == 0 {
		delete(c.answers, target)
	}
	return a.status, a.left
}

// sampleHandler answers each call of the plan's json_http operations with a sample of the
// operation's output, or the status Answer set, printing the call to w.calls.out.
func (w *World) sampleHandler() http.Handler {
	routes := servicesRoutes(w.Plan)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		rw.Header().Set("Content-Type", "application/json")
		for _, rt := range routes {
			if rt.method != r.Method || !rt.re.MatchString(r.URL.Path) {
				continue
			}
			status, left := w.calls.take(rt.target)
			if status != 0 {
				w.printCall(rt.target, r, body, fmt.Sprintf("answered %d as /answer asked%s", status, leftText(left)))
				rw.WriteHeader(status)
				_ = json.NewEncoder(rw).Encode(map[string]any{"message": fmt.Sprintf("jadpo dev's stand-in answered HTTP %d, as /answer asked", status)})
				return
			}
			w.printCall(rt.target, r, body, "answered 200 with a sample of its output")
			var v any = map[string]any{}
			if rt.output != nil {
				v = sample(w.Plan, *rt.output, 0)
			}
			_ = json.NewEncoder(rw).Encode(v)
			return
		}
		w.printCall("", r, body, "answered 404: no operation of the app has this method and path")
		rw.WriteHeader(http.StatusNotFound)
		fmt.Fprint(rw, `{"error":{"code":"not_found"}}`)
	})
}

func leftText(left int) string {
	switch {
	case left < 0:
		return " (every call, until /answer ... ok)"
	case left == 0:
		return " (samples again from the next call)"
	case left == 1:
		return " (1 more call)"
	}
	return fmt.Sprintf(" (%d more calls)", left)
}

// printCall prints one call the stand-in took: the operation, method and path, each header
// (a credential's value, or any config secret, redacted), the body, and the answer.
func (w *World) printCall(target string, r *http.Request, body []byte, answered string) {
	if w.calls.out == nil {
		return
	}
	var secrets []string
	if w.Config != nil {
		secrets = w.Config.Secrets()
	}
	var b strings.Builder
	what := target
	if what == "" {
		what = "an unknown operation"
	}
	fmt.Fprintf(&b, "jadpo dev: call to %s: %s %s\n", what, r.Method, w.shown(r.URL.RequestURI(), secrets))
	names := sortedKeys(r.Header)
	var hs []string
	for _, n := range names {
		v := strings.Join(r.Header[n], ", ")
		if secretHeader(n) {
			v = "[redacted]"
		}
		hs = append(hs, n+": "+w.shown(v, secrets))
	}
	fmt.Fprintf(&b, "  headers: %s\n", strings.Join(hs, "; "))
	text := body
	var compact bytes.Buffer
	if json.Compact(&compact, body) == nil {
		text = compact.Bytes()
	}
	s := string(text)
	if len(s) > MaxShownBody {
		s = s[:MaxShownBody] + fmt.Sprintf("... (%d bytes in all)", len(text))
	}
	if s == "" {
		s = "(none)"
	}
	fmt.Fprintf(&b, "  body: %s\n", w.shown(s, secrets))
	fmt.Fprintf(&b, "  %s\n", answered)
	w.calls.mu.Lock()
	defer w.calls.mu.Unlock()
	_, _ = io.WriteString(w.calls.out, b.String())
}

// secretHeader is a header whose value is a credential, whatever it holds.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, part := range []string{"token", "secret", "key", "password", "signature", "auth"} {
		if strings.Contains(n, part) && n != "idempotency-key" {
			return true
		}
	}
	return false
}

// shown is s for a terminal: each config secret replaced by [redacted], then
// escaped as the mail line is (Options.Shown: control and bidirectional
// characters, so a producer's text cannot move the cursor or reorder the line).
func (w *World) shown(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	if w.calls.escape != nil {
		return w.calls.escape(s)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) < 0 {
		return s
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}
