package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// view is what every page's template gets.
type view struct {
	Base     string
	Title    string
	Nav      string
	CSRF     string
	ReadOnly bool
	Flash    string
	Store    string
	LoggedIn bool
	Refresh  int // milliseconds
	Data     any
}

func (h *Handler) view(r *http.Request, s *session, title string) view {
	v := view{Base: h.o.Prefix, Title: title, ReadOnly: h.o.ReadOnly, Store: h.o.StoreName, Refresh: int(h.o.Refresh / time.Millisecond)}
	if s != nil {
		v.CSRF, v.LoggedIn, v.Flash = s.csrf, true, h.takeFlash(s)
	}
	return v
}

var pageNames = []string{"login", "loggedin", "overview", "parked", "message", "deliveries", "delivery", "confirm", "error"}

func (h *Handler) parse() error {
	funcs := template.FuncMap{
		"vis":  func(s string) string { return visible(s, false) },
		"time": formatTime,
		"ago":  func(t time.Time) string { return ago(h.o.Now(), t) },
		"bytes": func(n int64) string {
			if n < 0 {
				return "—"
			}
			return humanBytes(n)
		},
		"add": func(a, b int) int { return a + b },
	}
	base, err := template.New("layout").Funcs(funcs).ParseFS(assets, "assets/templates/layout.html", "assets/templates/list.html")
	if err != nil {
		return fmt.Errorf("console: templates: %w", err)
	}
	h.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(assets, "assets/templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("console: templates: %w", err)
		}
		h.pages[name] = t
	}
	return nil
}

func (h *Handler) render(w http.ResponseWriter, status int, name string, v view) {
	h.renderTemplate(w, status, name, "layout", v)
}

func (h *Handler) renderTemplate(w http.ResponseWriter, status int, name, tmpl string, v view) {
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, tmpl, v); err != nil {
		http.Error(w, "the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	v := h.view(r, s, http.StatusText(status))
	v.Data = msg
	h.render(w, status, "error", v)
}

func (h *Handler) storeFailed(w http.ResponseWriter, r *http.Request, s *session, err error) {
	h.fail(w, r, s, http.StatusServiceUnavailable, "The store could not be read: "+err.Error())
}

// ---- overview

type overviewData struct {
	Now         time.Time
	Queues      []queueActivity
	States      []store.DeliveryState
	Subscribers []subscriberRow
	Totals      []int64
	Parked      []parkedRow
	Oldest      time.Time
	Tables      []store.TableStats
	Run         *runCounts // nil without Options.MetricsURL
	// Housekept is the newest housekeeping runs the store recorded, newest first.
	Housekept []store.HousekeepingRun
	RunsKept  int
}

// housekeepingShown is how many recorded housekeeping runs the overview lists.
const housekeepingShown = 10

type subscriberRow struct {
	Name   string
	Counts []int64
}

type parkedRow struct {
	Reason store.Reason
	Counts []int64 // failed, pending, dismissed
}

var parkedStates = []store.ParkedState{store.ParkedFailed, store.ParkedPending, store.ParkedDismissed}

// overviewData is the overview's figures. Every open overview polls, and counting a large
// store's rows takes time (seconds at a million rows on SQLite: docs/performance.md), so the
// figures are read at most once per half a refresh interval and at most once per ten times
// the last reading's duration; while one reading runs, other requests get the last figures
// (each shows when it was read).
func (h *Handler) overviewData(ctx context.Context) (overviewData, error) {
	now := h.o.Now()
	h.mu.Lock()
	if !h.overviewAt.IsZero() {
		age := now.Sub(h.overviewAt)
		if h.overviewReading || (age >= 0 && (age < h.o.Refresh/2 || age < 10*h.overviewCost)) {
			d := h.overviewCache
			h.mu.Unlock()
			return d, nil
		}
	}
	h.overviewReading = true
	h.mu.Unlock()
	start := time.Now() // the reading's own duration, on the wall clock whatever Now is
	d, err := h.readOverview(ctx, now)
	cost := time.Since(start)
	h.mu.Lock()
	h.overviewReading = false
	if err == nil {
		h.overviewCache, h.overviewAt, h.overviewCost = d, now, cost
	}
	h.mu.Unlock()
	return d, err
}

func (h *Handler) readOverview(ctx context.Context, now time.Time) (overviewData, error) {
	d := overviewData{Now: now, States: store.DeliveryStates}
	var byWindow [][]store.ActivityCount
	for _, w := range windows {
		counts, err := h.b.Activity(ctx, w.since(now), w.step)
		if err != nil {
			return d, err
		}
		byWindow = append(byWindow, counts)
	}
	d.Queues = activity(byWindow, now)
	st, err := h.o.Store.Stats(ctx)
	if err != nil {
		return d, err
	}
	subs := map[string][]int64{}
	d.Totals = make([]int64, len(d.States))
	for k, n := range st.BySubscriber {
		row := subs[k.Subscriber]
		if row == nil {
			row = make([]int64, len(d.States))
			subs[k.Subscriber] = row
		}
		i := slices.Index(d.States, k.State)
		if i >= 0 {
			row[i] += n
			d.Totals[i] += n
		}
	}
	for _, name := range slices.Sorted(maps.Keys(subs)) {
		d.Subscribers = append(d.Subscribers, subscriberRow{Name: name, Counts: subs[name]})
	}
	for _, reason := range store.Reasons {
		row := parkedRow{Reason: reason, Counts: make([]int64, len(parkedStates))}
		for i, ps := range parkedStates {
			row.Counts[i] = st.Parked[store.ParkedKey{Reason: reason, State: ps}]
		}
		d.Parked = append(d.Parked, row)
	}
	d.Oldest = st.OldestPending
	d.Tables = st.Tables
	if d.Housekept, err = h.b.HousekeepingRuns(ctx, housekeepingShown); err != nil {
		return d, err
	}
	d.RunsKept = store.HousekeepingRunsKept
	d.Run = h.runCounts(ctx)
	return d, nil
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, s *session) {
	d, err := h.overviewData(r.Context())
	if err != nil {
		h.storeFailed(w, r, s, err)
		return
	}
	v := h.view(r, s, "Overview")
	v.Nav, v.Data = "overview", d
	h.render(w, http.StatusOK, "overview", v)
}

// live is the overview's changing part alone, which the page's script fetches to refresh
// itself.
func (h *Handler) live(w http.ResponseWriter, r *http.Request, s *session) {
	d, err := h.overviewData(r.Context())
	if err != nil {
		http.Error(w, "the store could not be read: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	v := h.view(r, s, "Overview")
	v.Data = d
	h.renderTemplate(w, http.StatusOK, "overview", "live", v)
}

// ---- lists

type listData struct {
	Kind    string // "parked" or "deliveries"
	Query   url.Values
	Filter  filterForm
	Entries []store.Entry
	Next    string // the older page's URL, "" on the last page
	First   bool
	Reasons []store.Reason
	PStates []store.ParkedState
	DStates []store.DeliveryState
}

// filterForm is a list's filter as the form shows it.
type filterForm struct {
	Source, Reason, State, Event, MessageID, Subscriber, From, To string
}

// hidden are a filter's fields as hidden inputs, for a form that acts on "every row
// the filter matches".
func (f filterForm) Pairs() [][2]string {
	var out [][2]string
	for _, p := range [][2]string{{"source", f.Source}, {"reason", f.Reason}, {"state", f.State}, {"event", f.Event},
		{"message_id", f.MessageID}, {"subscriber", f.Subscriber}, {"from", f.From}, {"to", f.To}} {
		if p[1] != "" {
			out = append(out, p)
		}
	}
	return out
}

// Describe is the filter in words.
func (f filterForm) Describe() string {
	var parts []string
	for _, p := range f.Pairs() {
		parts = append(parts, strings.ReplaceAll(p[0], "_", " ")+" "+p[1])
	}
	if len(parts) == 0 {
		return "no filter"
	}
	return strings.Join(parts, ", ")
}

const timeForm = "2006-01-02T15:04"

func parseTimeField(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{timeForm, "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a time: write it as 2026-01-31T14:05 (UTC)", name, s)
}

func readFilter(q url.Values) filterForm {
	g := func(k string) string { return strings.TrimSpace(q.Get(k)) }
	return filterForm{Source: g("source"), Reason: g("reason"), State: g("state"), Event: g("event"),
		MessageID: g("message_id"), Subscriber: g("subscriber"), From: g("from"), To: g("to")}
}

func (f filterForm) parked() (store.ParkedQuery, error) {
	q := store.ParkedQuery{Source: f.Source, Reason: store.Reason(f.Reason), State: store.ParkedState(f.State), Event: f.Event, ReceivedID: f.MessageID}
	if q.Reason != "" && !q.Reason.Valid() {
		return q, fmt.Errorf("reason %q is not one of unlisted_type, unreadable, too_large", f.Reason)
	}
	if q.State != "" && !slices.Contains(parkedStates, q.State) {
		return q, fmt.Errorf("state %q is not one of failed, pending, dismissed", f.State)
	}
	var err error
	if q.From, err = parseTimeField("from", f.From); err != nil {
		return q, err
	}
	q.To, err = parseTimeField("to", f.To)
	return q, err
}

func (f filterForm) deliveries() (store.DeliveryQuery, error) {
	q := store.DeliveryQuery{Subscriber: f.Subscriber, State: store.DeliveryState(f.State), Event: f.Event}
	if q.State != "" && !slices.Contains(store.DeliveryStates, q.State) {
		return q, fmt.Errorf("state %q is not a delivery state (pending, running, retry_wait, succeeded, failed, dismissed)", f.State)
	}
	var err error
	if q.From, err = parseTimeField("from", f.From); err != nil {
		return q, err
	}
	q.To, err = parseTimeField("to", f.To)
	return q, err
}

func before(q url.Values) (int64, error) {
	s := q.Get("before")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("before %q is not a row id", s)
	}
	return n, nil
}

func nextURL(base, path string, q url.Values, last int64) string {
	n := url.Values{}
	for k, vs := range q {
		if k != "before" {
			n[k] = vs
		}
	}
	n.Set("before", strconv.FormatInt(last, 10))
	return base + path + "?" + n.Encode()
}

// lister is what a list page, and a change to every row a filter matches, need of one kind
// of row: parked messages or deliveries.
type lister struct {
	kind, title string
	check       func(filterForm) error
	browse      func(ctx context.Context, f filterForm, before int64, limit int) ([]store.Entry, error)
	count       func(ctx context.Context, f filterForm) (int64, error)
}

func (h *Handler) listers() map[string]lister {
	return map[string]lister{
		"parked": {
			kind: "parked", title: "Parked messages",
			check: func(f filterForm) error { _, err := f.parked(); return err },
			browse: func(ctx context.Context, f filterForm, before int64, limit int) ([]store.Entry, error) {
				q, _ := f.parked()
				q.Before, q.Limit = before, limit
				return h.b.BrowseParked(ctx, q)
			},
			count: func(ctx context.Context, f filterForm) (int64, error) {
				q, _ := f.parked()
				return h.b.CountParked(ctx, q)
			},
		},
		"deliveries": {
			kind: "deliveries", title: "Deliveries",
			check: func(f filterForm) error { _, err := f.deliveries(); return err },
			browse: func(ctx context.Context, f filterForm, before int64, limit int) ([]store.Entry, error) {
				q, _ := f.deliveries()
				q.Before, q.Limit = before, limit
				return h.b.BrowseDeliveries(ctx, q)
			},
			count: func(ctx context.Context, f filterForm) (int64, error) {
				q, _ := f.deliveries()
				return h.b.CountDeliveries(ctx, q)
			},
		},
	}
}

// list serves a list page of kind: the filter's newest rows below the cursor, a page of
// PageLimit, and the link to the next (older) page when there is one.
func (h *Handler) list(kind string) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		l := h.kinds[kind]
		qv := r.URL.Query()
		f := readFilter(qv)
		cur, err := before(qv)
		if err == nil {
			err = l.check(f)
		}
		if err != nil {
			h.fail(w, r, s, http.StatusBadRequest, err.Error())
			return
		}
		es, err := l.browse(r.Context(), f, cur, store.PageLimit+1)
		if err != nil {
			h.storeFailed(w, r, s, err)
			return
		}
		d := listData{Kind: kind, Query: qv, Filter: f, First: cur == 0, Reasons: store.Reasons, PStates: parkedStates, DStates: store.DeliveryStates}
		if len(es) > store.PageLimit {
			es = es[:store.PageLimit]
			d.Next = nextURL(h.o.Prefix, "/"+kind, qv, es[len(es)-1].ID.N)
		}
		for i := range es {
			h.fillBudget(&es[i])
		}
		d.Entries = es
		v := h.view(r, s, l.title)
		v.Nav, v.Data = kind, d
		h.render(w, http.StatusOK, kind, v)
	}
}

func (h *Handler) fillBudget(e *store.Entry) {
	if h.o.MaxAttempts != nil && e.ID.Kind == store.KindDelivery {
		e.MaxAttempts = h.o.MaxAttempts(e.Subscriber, e.MaxAttempts)
	}
}

// ---- one message, one delivery

type entryData struct {
	Entry   store.Entry
	Body    string
	IsJSON  bool
	Headers [][2]string
	// MaxShown is the most attempts the store returns (store.MaxShownAttempts).
	MaxShown int
}

// pathID reads the {id} of a page: "p7" or "7" on a parked page, "d4" or "4" on a
// delivery's.
func pathID(r *http.Request, kind store.Kind) (store.ID, error) {
	s := r.PathValue("id")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		if kind == store.KindParked {
			s = "p" + s
		} else {
			s = "d" + s
		}
	}
	id, err := store.ParseID(s)
	if err == nil && id.Kind != kind {
		err = fmt.Errorf("%s is not a %s's id", id, kind)
	}
	return id, err
}

func (h *Handler) entry(w http.ResponseWriter, r *http.Request, s *session, kind store.Kind, withBody bool) (store.Entry, bool) {
	id, err := pathID(r, kind)
	if err != nil {
		h.fail(w, r, s, http.StatusNotFound, err.Error())
		return store.Entry{}, false
	}
	e, err := h.o.Store.Show(r.Context(), id, withBody)
	if errors.Is(err, store.ErrUnknownID) {
		h.fail(w, r, s, http.StatusNotFound, fmt.Sprintf("%s: no such %s (housekeeping may have deleted it)", id, kind))
		return e, false
	}
	if err != nil {
		h.storeFailed(w, r, s, err)
		return e, false
	}
	h.fillBudget(&e)
	return e, true
}

func (h *Handler) entryPage(w http.ResponseWriter, r *http.Request, s *session, kind store.Kind, page string) {
	e, ok := h.entry(w, r, s, kind, true)
	if !ok {
		return
	}
	d := entryData{Entry: e, MaxShown: store.MaxShownAttempts}
	d.Body, d.IsJSON = prettyBody(e.Body)
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		d.Headers = append(d.Headers, [2]string{k, e.Headers[k]})
	}
	v := h.view(r, s, e.ID.String()+" · "+visible(e.Label(), false))
	v.Nav, v.Data = page, d
	if page == "parked" {
		h.render(w, http.StatusOK, "message", v)
	} else {
		h.render(w, http.StatusOK, "delivery", v)
	}
}

func (h *Handler) parkedPage(w http.ResponseWriter, r *http.Request, s *session) {
	h.entryPage(w, r, s, store.KindParked, "parked")
}

func (h *Handler) deliveryPage(w http.ResponseWriter, r *http.Request, s *session) {
	h.entryPage(w, r, s, store.KindDelivery, "deliveries")
}

// parkedBody downloads a parked message's body, its exact bytes, never shown inline.
func (h *Handler) parkedBody(w http.ResponseWriter, r *http.Request, s *session) {
	e, ok := h.entry(w, r, s, store.KindParked, true)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.body"`, e.ID))
	w.Header().Set("Content-Length", strconv.Itoa(len(e.Body)))
	_, _ = w.Write(e.Body)
}

// ---- changes

type confirmData struct {
	Action  string
	Kind    string
	Count   int64
	Filter  filterForm
	Return  string
	TooMany bool
}

// change retries or dismisses: the ids posted (one, or a selection), or, with all=1, every
// failed row the posted filter matches, after a confirmation page that shows their count.
// Each is one call of the store's Retry or Dismiss, so one transaction under the CLI's
// rules: only failed rows change, and a row another change took first refuses the whole
// call, changing nothing.
func (h *Handler) change(w http.ResponseWriter, r *http.Request, s *session) {
	if h.o.ReadOnly {
		h.logf("console refused a change: read-only", "session", s.name)
		h.fail(w, r, s, http.StatusForbidden, "This console is read-only (--read-only): it changes nothing.")
		return
	}
	form := r.PostForm
	action := form.Get("action")
	if action != "retry" && action != "dismiss" {
		h.fail(w, r, s, http.StatusBadRequest, fmt.Sprintf("action %q is neither retry nor dismiss", action))
		return
	}
	back := safeReturn(h.o.Prefix, form.Get("return"))
	var ids []store.ID
	what := ""
	if form.Get("all") == "1" {
		kind := form.Get("kind")
		f := readFilter(form)
		f.State = "failed" // only failed rows are retried or dismissed
		l, ok := h.kinds[kind]
		if !ok {
			h.fail(w, r, s, http.StatusBadRequest, fmt.Sprintf("kind %q is neither parked nor deliveries", kind))
			return
		}
		if err := l.check(f); err != nil {
			h.fail(w, r, s, http.StatusBadRequest, err.Error())
			return
		}
		n, err := l.count(r.Context(), f)
		if err != nil {
			h.storeFailed(w, r, s, err)
			return
		}
		if form.Get("confirm") != "yes" || n > MaxChange {
			v := h.view(r, s, "Confirm "+action)
			v.Nav = kind
			v.Data = confirmData{Action: action, Kind: kind, Count: n, Filter: f, Return: back, TooMany: n > MaxChange}
			h.render(w, http.StatusOK, "confirm", v)
			return
		}
		ids, err = collectIDs(func(before int64) ([]store.Entry, error) { return l.browse(r.Context(), f, before, 1000) })
		if err != nil {
			h.storeFailed(w, r, s, err)
			return
		}
		if want, _ := strconv.ParseInt(form.Get("count"), 10, 64); want != int64(len(ids)) {
			h.setFlash(s, fmt.Sprintf("Nothing changed: the filter matched %d rows when you confirmed and matches %d now; look again.", want, len(ids)))
			http.Redirect(w, r, back, http.StatusSeeOther)
			return
		}
		what = "every failed row matching " + f.Describe()
	} else {
		for _, v := range form["id"] {
			id, err := store.ParseID(v)
			if err != nil {
				h.fail(w, r, s, http.StatusBadRequest, err.Error())
				return
			}
			ids = append(ids, id)
		}
		what = "the selection"
		if len(ids) > MaxChange {
			h.fail(w, r, s, http.StatusBadRequest, fmt.Sprintf("%d rows selected: one change takes at most %d", len(ids), MaxChange))
			return
		}
	}
	if len(ids) == 0 {
		h.setFlash(s, "Nothing changed: no row was selected.")
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	var err error // the store's clock stamps the change (docs/design/store.md, "One clock")
	if action == "retry" {
		err = h.o.Store.Retry(r.Context(), ids)
	} else {
		err = h.o.Store.Dismiss(r.Context(), ids)
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.String()
	}
	var se *store.StateError
	switch {
	case errors.As(err, &se):
		h.logf("console change refused", "session", s.name, "action", action, "ids", strings.Join(names, " "), "error", err.Error())
		h.setFlash(s, "Nothing changed: "+err.Error()+".")
	case err != nil:
		h.storeFailed(w, r, s, err)
		return
	default:
		h.logf("console change", "session", s.name, "action", action, "what", what, "count", len(ids), "ids", strings.Join(names, " "))
		past := map[string]string{"retry": "Retried", "dismiss": "Dismissed"}[action]
		h.setFlash(s, fmt.Sprintf("%s %d: %s.", past, len(ids), shortList(names)))
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

func shortList(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

// collectIDs pages through a filter by keyset, up to MaxChange+1 ids.
func collectIDs(page func(before int64) ([]store.Entry, error)) ([]store.ID, error) {
	var out []store.ID
	var cur int64
	for len(out) <= MaxChange {
		es, err := page(cur)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			out = append(out, e.ID)
		}
		if len(es) < 1000 {
			break
		}
		cur = es[len(es)-1].ID.N
	}
	return out, nil
}

// safeReturn is where a change goes back to: a path of this console, else its overview.
func safeReturn(prefix, ret string) string {
	if ret == "" || !strings.HasPrefix(ret, prefix+"/") || strings.HasPrefix(ret, "//") || strings.ContainsAny(ret, "\\\r\n") {
		return prefix + "/"
	}
	return ret
}

// ---- formatting

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + roundDuration(-d)
	}
	return roundDuration(d) + " ago"
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
