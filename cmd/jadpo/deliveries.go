package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/cmd/internal/jsonout"
	"github.com/jadpo/jadpo/lang/termtext"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// storeOpener opens the store of a deliveries command; it returns the store and its URL.
type storeOpener func(ctx context.Context) (store.Store, string, error)

func (e *env) deliveriesCommand() *cobra.Command {
	var f appFlags
	var state, format string
	var withBody bool
	var dirFlag string
	var dir string // the project folder: the argument or --dir
	open := func(ctx context.Context) (store.Store, string, error) {
		st, url, plan, err := e.openOperatorStore(ctx, dir, &f, format)
		if err != nil {
			return nil, "", err
		}
		return withBudgets(st, plan), url, nil
	}
	// setDir takes the project folder from the argument or --dir, and checks --format.
	setDir := func(args []string) error {
		if err := checkFormat(format); err != nil {
			return err
		}
		d, err := projectArg(args, dirFlag)
		dir = d
		return err
	}
	listRun := func(c *cobra.Command, args []string) error {
		if err := setDir(args); err != nil {
			return err
		}
		return e.listEntries(c.Context(), open, state, format, commandName(c))
	}
	root := &cobra.Command{
		Use:   "deliveries [dir]",
		Short: "List, show, retry and dismiss deliveries and parked messages",
		Long: "Deliveries reads the project's events' store (the one jadpo run and jadpo tick keep, found\n" +
			"by the same rule: docs/guide/operating.md) and never creates or migrates one: a missing store is an error.",
		Example: "  jadpo deliveries examples/warehouse\n" +
			"  jadpo deliveries --state all --format json\n" +
			"  jadpo deliveries show p1 --dir examples/warehouse\n" +
			"  jadpo deliveries retry p1 d4 --dir examples/warehouse",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				if _, err := os.Stat(args[0]); err != nil {
					// `jadpo deliveries lst` is more likely a mistyped command than a folder.
					return usageError{fmt.Errorf("%s is neither a project folder nor a command of jadpo deliveries (list, show, retry, dismiss)", args[0])}
				}
			}
			return listRun(c, args)
		},
	}
	addDirFlag(root, &dirFlag, true)
	root.PersistentFlags().StringVar(&f.database, "database", "", "the events' store: postgres://... or sqlite:PATH (default: as jadpo run finds it)")
	root.PersistentFlags().StringVar(&f.plan, "plan", "", "read the store's database from this plan")
	addFormatFlag(root, &format, true, true)
	stateFlag := func(c *cobra.Command) {
		c.Flags().StringVar(&state, "state", "failed", "failed, pending, succeeded, dismissed or all")
		_ = c.RegisterFlagCompletionFunc("state", cobra.FixedCompletions([]string{"failed", "pending", "succeeded", "dismissed", "all"}, cobra.ShellCompDirectiveNoFileComp))
	}
	stateFlag(root)
	list := &cobra.Command{
		Use:     "list [dir]",
		Short:   "List failed deliveries and parked messages (--state: pending, succeeded, dismissed, all)",
		Example: "  jadpo deliveries list examples/warehouse --state pending",
		Args:    cobra.MaximumNArgs(1),
		RunE:    listRun,
	}
	stateFlag(list)
	// ids completes delivery and parked-message ids from the store (state all).
	ids := func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if dir == "" {
			dir, _ = projectArg(nil, dirFlag)
		}
		saved := e.stderr
		e.stderr = discard{} // completion prints nothing but the candidates
		defer func() { e.stderr = saved }()
		st, _, err := open(c.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer st.Close()
		entries, err := st.List(c.Context(), store.Filter{State: store.ListAll})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, en := range entries {
			if !slices.Contains(args, en.ID.String()) {
				out = append(out, en.ID.String()+"\t"+stateText(en, nil)+" "+en.Label())
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Show one delivery or parked message whole (the body only with --body)",
		Example:           "  jadpo deliveries show p1 --dir examples/warehouse --body",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: ids,
		RunE: func(c *cobra.Command, args []string) error {
			if err := setDir(nil); err != nil {
				return err
			}
			id, err := store.ParseID(args[0])
			if err != nil {
				return usageError{err}
			}
			st, url, err := open(c.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			en, err := st.Show(c.Context(), id, withBody)
			if errors.Is(err, store.ErrUnknownID) {
				return cmdError{code: "unknown_id", exit: exitFound, msg: fmt.Sprintf("%s: no such delivery or parked message", id)}
			}
			if err != nil {
				return err
			}
			if format == "json" {
				return jsonout.Write(e.stdout, jsonout.DeliveryEntry{
					Envelope: jsonout.NewEnvelope("delivery_entry", commandName(c), jsonout.StatusOK),
					Store:    store.RedactURL(url), Entry: entryJSON(en, withBody)})
			}
			e.printEntry(en, withBody)
			return nil
		},
	}
	show.Flags().BoolVar(&withBody, "body", false, "print the message body too")
	change := func(use, short, done, action string, newState store.ListState, apply func(store.Store, context.Context, []store.ID) error) *cobra.Command {
		return &cobra.Command{
			Use:               use + " ID...",
			Short:             short,
			Example:           "  jadpo deliveries " + use + " p1 d4 --dir examples/warehouse",
			Args:              cobra.MinimumNArgs(1),
			ValidArgsFunction: ids,
			RunE: func(c *cobra.Command, args []string) error {
				if err := setDir(nil); err != nil {
					return err
				}
				ids := make([]store.ID, 0, len(args))
				for _, a := range args {
					id, err := store.ParseID(a)
					if err != nil {
						return usageError{err}
					}
					// An id given twice is acted on, and printed, once.
					if !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				}
				st, url, err := open(c.Context())
				if err != nil {
					return err
				}
				defer st.Close()
				if err := apply(st, c.Context(), ids); err != nil {
					var se *store.StateError
					if errors.As(err, &se) {
						return cmdError{code: "wrong_state", exit: exitFound, msg: refusalText(c.Context(), st, se)}
					}
					return err
				}
				if format == "json" {
					names := make([]string, len(ids))
					for i, id := range ids {
						names[i] = id.String()
					}
					return jsonout.Write(e.stdout, jsonout.DeliveryChange{
						Envelope: jsonout.NewEnvelope("delivery_change", commandName(c), jsonout.StatusOK),
						Store:    store.RedactURL(url), Action: action, IDs: names, State: string(newState)})
				}
				for _, id := range ids {
					fmt.Fprintf(e.stdout, "%s %s\n", id, done)
				}
				return nil
			},
		}
	}
	retry := change("retry", "Make failed deliveries and parked messages pending again (read on the next tick)", "is pending again", "retry", store.ListPending,
		func(s store.Store, ctx context.Context, ids []store.ID) error {
			return s.Retry(ctx, ids)
		})
	dismiss := change("dismiss", "Set failed deliveries and parked messages aside (deleted 30 days later)", "is dismissed", "dismiss", store.ListDismissed,
		func(s store.Store, ctx context.Context, ids []store.ID) error {
			return s.Dismiss(ctx, ids)
		})
	root.AddCommand(list, show, retry, dismiss)
	return root
}

// openOperatorStore opens the store of an operator's command (deliveries, console) by the
// one rule: --database, else the project's store as jadpo run finds it. It creates and
// migrates nothing. The plan is nil when none was read (--database without a project).
func (e *env) openOperatorStore(ctx context.Context, dir string, f *appFlags, format string) (store.Store, string, *ir.Program, error) {
	var url, from string
	var plan *ir.Program
	var err error
	if f.database != "" {
		plan = quietPlan(dir, f)
		url, from, err = storeURL(dir, nil, nil, f.database)
	} else {
		p, err := e.loadPlan(dir, f)
		var ee exitError
		if errors.As(err, &ee) && format == "json" {
			// The check's report went to stderr; stdout still gets one JSON document.
			return nil, "", nil, cmdError{code: "check_failed", exit: ee.code, msg: fmt.Sprintf("the project %s has errors (jadpo check %s shows them), so its store's database is not known; or give --database", dir, shellQuote(dir))}
		}
		if err != nil {
			return nil, "", nil, err
		}
		plan = p
		cfg, err := runtime.LoadConfig(p, os.Environ(), filepath.Join(dir, ".env.local"))
		if err != nil && p.Store != nil && p.Store.Database != nil && p.Store.Database.Config != "" {
			return nil, "", nil, configProblems(err)
		}
		if cfg == nil {
			cfg = runtime.EmptyConfig()
		}
		if url, from, err = storeURL(dir, p, cfg, ""); err != nil {
			return nil, "", nil, startupError{msg: err.Error()}
		}
	}
	if err != nil {
		return nil, "", nil, startupError{msg: err.Error()}
	}
	st, err := openExistingStore(ctx, url)
	if err != nil {
		return nil, "", nil, err
	}
	if format != "json" {
		fmt.Fprintf(e.stderr, "store: %s (%s)\n", shownStore(url), from)
	}
	return st, url, plan, nil
}

func (e *env) listEntries(ctx context.Context, open storeOpener, state, format, command string) error {
	ls := store.ListState(state)
	switch ls {
	case store.ListFailed, store.ListPending, store.ListDismissed, store.ListSucceeded, store.ListAll:
	default:
		return usageError{fmt.Errorf("--state must be failed, pending, succeeded, dismissed or all, not %q", state)}
	}
	st, url, err := open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	entries, err := st.List(ctx, store.Filter{State: ls})
	if err != nil {
		return err
	}
	if format == "json" {
		out := make([]jsonout.Entry, 0, len(entries))
		for _, en := range entries {
			out = append(out, entryJSON(en, false))
		}
		return jsonout.Write(e.stdout, jsonout.DeliveryList{
			Envelope: jsonout.NewEnvelope("delivery_list", command, jsonout.StatusOK),
			Store:    store.RedactURL(url), State: state, Entries: out})
	}
	if len(entries) == 0 {
		if ls == store.ListAll {
			fmt.Fprintln(e.stdout, "no deliveries or parked messages")
		} else {
			fmt.Fprintf(e.stdout, "no %s deliveries or parked messages\n", state)
		}
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tWHAT\tCODE\tATTEMPTS\tSINCE")
	for _, en := range entries {
		attempts := "-"
		if en.ID.Kind == store.KindDelivery {
			attempts = fmt.Sprint(en.Attempts)
			if en.MaxAttempts > 0 {
				attempts += fmt.Sprintf("/%d", en.MaxAttempts)
			}
		}
		// A time on the day of SINCE is its time of day alone, to keep the column short.
		since := en.UpdatedAt.UTC()
		clock := func(t time.Time) string {
			if t = t.UTC(); t.Format(time.DateOnly) == since.Format(time.DateOnly) {
				return t.Format("15:04:05Z")
			}
			return t.Format(time.RFC3339)
		}
		code := "-" // a delivery whose first attempt is not settled yet has no code
		if en.Code != "" {
			code = termtext.Line(en.Code)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", en.ID, stateText(en, clock), termtext.Line(en.Label()), code, attempts, since.Format(time.RFC3339))
	}
	return tw.Flush()
}

func (e *env) printEntry(en store.Entry, withBody bool) {
	w := e.stdout
	// Every value a producer or package chose is escaped (termtext.Line): a
	// wire type of `\x1b[2J` must not clear the operator's screen.
	line := termtext.Line
	// The row's own state where it differs; its time is on a line of its own below.
	fmt.Fprintf(w, "%s  %s  %s\n", en.ID, stateText(en, nil), line(en.Label()))
	fmt.Fprintf(w, "  source:      %s\n", line(en.Source))
	if en.ReceivedID != "" {
		fmt.Fprintf(w, "  message id:  %s\n", line(en.ReceivedID))
	}
	if en.EventName != "" {
		fmt.Fprintf(w, "  event:       %s\n", line(en.EventName))
	} else if en.WireType != "" {
		fmt.Fprintf(w, "  wire type:   %s\n", line(en.WireType))
	}
	// Header values are shown as they are, escaped: a secret never comes from a header column.
	for _, name := range slices.Sorted(maps.Keys(en.Headers)) {
		fmt.Fprintf(w, "  header:      %s=%s\n", line(name), line(en.Headers[name]))
	}
	if en.Code != "" {
		fmt.Fprintf(w, "  code:        %s\n", line(en.Code))
	}
	if en.Error != "" {
		fmt.Fprintf(w, "  last error:  %s\n", line(en.Error))
	}
	for _, p := range en.Problems {
		field := p.Field
		if field == "" {
			field = "(body)" // as the log names it (runtime.ProblemsText)
		}
		fmt.Fprintf(w, "  problem:     %s: %s\n", line(field), line(p.Rule))
	}
	if en.ID.Kind == store.KindDelivery && en.MaxAttempts > 0 {
		fmt.Fprintf(w, "  attempts:    %d of %d\n", en.Attempts, en.MaxAttempts)
	} else if en.ID.Kind == store.KindDelivery {
		fmt.Fprintf(w, "  attempts:    %d\n", en.Attempts)
	}
	// Each settled attempt, oldest first: its time, number, outcome, code and error text.
	for _, a := range en.AttemptLog {
		fmt.Fprintf(w, "  attempt:     %s  #%d  %s", a.At.UTC().Format(time.RFC3339), a.N, a.Outcome)
		if a.Code != "" {
			fmt.Fprintf(w, "  %s", line(a.Code))
		}
		if a.Error != "" {
			fmt.Fprintf(w, "  %s", line(a.Error))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  created:     %s\n", en.CreatedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "  updated:     %s\n", en.UpdatedAt.UTC().Format(time.RFC3339))
	if !en.NextAttemptAt.IsZero() && en.ID.Kind == store.KindDelivery {
		fmt.Fprintf(w, "  next try:    %s\n", en.NextAttemptAt.UTC().Format(time.RFC3339))
	}
	if !en.LeaseUntil.IsZero() {
		fmt.Fprintf(w, "  lease until: %s  (a process holds it until then)\n", en.LeaseUntil.UTC().Format(time.RFC3339))
	}
	if !en.SettledAt.IsZero() {
		fmt.Fprintf(w, "  settled:     %s\n", en.SettledAt.UTC().Format(time.RFC3339))
	}
	if !en.DismissedAt.IsZero() {
		fmt.Fprintf(w, "  dismissed:   %s\n", en.DismissedAt.UTC().Format(time.RFC3339))
	}
	if en.BodySHA256 != "" {
		fmt.Fprintf(w, "  body sha256: %s\n", en.BodySHA256)
	}
	if withBody && en.Body != nil {
		// The body as stored: its exact bytes to a pipe or a file, for
		// scripts; escaped on a terminal, where an OSC 52 in it would
		// write the clipboard (docs/design/runtime.md, "Terminal output").
		body := string(en.Body)
		if stdoutIsTerminal(w) {
			body = termtext.Text(body)
		}
		fmt.Fprintf(w, "  body:\n%s\n", body)
	}
}

// stateText is an entry's state as the list, show and a refusal print it: its listing
// state, and a delivery's row state where it differs, with its time when clock is not nil:
// "pending (retry_wait, next try 10:00:04Z)", "pending (running, lease until 10:01:00Z)".
// A listing state alone would say pending of a delivery that cannot be retried.
func stateText(en store.Entry, clock func(time.Time) string) string {
	if en.RowState == "" || en.RowState == string(en.State) {
		return string(en.State)
	}
	s := string(en.State) + " (" + termtext.Line(en.RowState)
	if clock != nil {
		switch {
		case !en.NextAttemptAt.IsZero():
			s += ", next try " + clock(en.NextAttemptAt)
		case !en.LeaseUntil.IsZero():
			s += ", lease until " + clock(en.LeaseUntil)
		}
	}
	return s + ")"
}

// refusalText is a refused retry's or dismiss's message, each id's state as the list
// shows it: "d1 is pending (retry_wait, next try …): it is retried by itself". The store's
// refusal holds the row's state only, so each delivery not settled yet is read again for
// its time (one that changed since, or cannot be read, is named by that state alone).
func refusalText(ctx context.Context, st store.Store, se *store.StateError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s refused, nothing changed: ", se.Op)
	for i, r := range se.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case r.State == store.StateUnknown:
			fmt.Fprintf(&b, "%s is unknown", r.ID)
		case r.ID.Kind == store.KindDelivery && pendingWhy[r.State] != "":
			en := store.Entry{ID: r.ID, State: store.ListPending, RowState: r.State}
			if got, err := st.Show(ctx, r.ID, false); err == nil && got.RowState == r.State {
				en = got
			}
			rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
			fmt.Fprintf(&b, "%s is %s: %s", r.ID, stateText(en, rfc), pendingWhy[r.State])
		default:
			fmt.Fprintf(&b, "%s is %s", r.ID, termtext.Line(r.State))
		}
	}
	verb := map[string]string{"retry": "retried", "dismiss": "dismissed"}[se.Op]
	fmt.Fprintf(&b, " (only a failed delivery or parked message can be %s)", verb)
	return b.String()
}

// pendingWhy says what becomes of a delivery listed as pending, by its row's state.
var pendingWhy = map[string]string{
	"pending":    "it is delivered by itself",
	"retry_wait": "it is retried by itself",
	"running":    "a process holds it until then",
}

// stdoutIsTerminal says whether w is a terminal; tests stand in for one.
var stdoutIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func entryJSON(en store.Entry, withBody bool) jsonout.Entry {
	out := jsonout.Entry{
		ID: en.ID.String(), State: string(en.State), RowState: en.RowState, What: en.Label(), Source: en.Source,
		Event: en.EventName, WireType: en.WireType, MessageID: en.ReceivedID, Code: en.Code, Error: en.Error,
		Problems: make([]jsonout.Problem, 0, len(en.Problems)), CreatedAt: en.CreatedAt.UTC(), UpdatedAt: en.UpdatedAt.UTC(),
	}
	for _, p := range en.Problems {
		out.Problems = append(out.Problems, jsonout.Problem{Field: p.Field, Rule: p.Rule})
	}
	if out.RowState == "" {
		out.RowState = out.State
	}
	// Each time is left out when it does not apply (zero).
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		u := t.UTC()
		return &u
	}
	out.LeaseUntil, out.SettledAt, out.DismissedAt = at(en.LeaseUntil), at(en.SettledAt), at(en.DismissedAt)
	if en.ID.Kind == store.KindDelivery {
		out.NextAttemptAt = at(en.NextAttemptAt)
		// MaxAttempts 0 is null: the plan's budget, and no plan was read.
		subscriber, attempts, budget := en.Subscriber, en.Attempts, jsonout.Budget(en.MaxAttempts)
		out.Kind, out.Subscriber, out.Attempts, out.MaxAttempts = "delivery", &subscriber, &attempts, &budget
	} else {
		sum := en.BodySHA256
		out.Kind, out.BodySHA256 = "parked_message", &sum
	}
	if len(en.Headers) > 0 {
		out.Headers = en.Headers
	}
	if en.AttemptLog != nil {
		log := make([]jsonout.Attempt, 0, len(en.AttemptLog))
		for _, a := range en.AttemptLog {
			log = append(log, jsonout.Attempt{Attempt: a.N, At: a.At.UTC(), Outcome: string(a.Outcome), Code: a.Code, Error: a.Error})
		}
		out.AttemptLog = &log
	}
	if withBody && en.Body != nil {
		// JSON text holds characters, not bytes: a body that is not
		// valid UTF-8 gets bodyBase64 beside body, its exact bytes (body
		// then shows each byte that is not UTF-8 as U+FFFD, for reading).
		body := string(en.Body)
		out.Body = &body
		if !utf8.Valid(en.Body) {
			b64 := base64.StdEncoding.EncodeToString(en.Body)
			out.BodyBase64 = &b64
		}
	}
	return out
}

// quietPlan reads the plan for what the store does not hold (a delivery's
// attempt budget when the plan's applies): --plan, or the project in dir
// when it has an app.jadpo and checks. It prints nothing; nil when none.
func quietPlan(dir string, f *appFlags) *ir.Program {
	if f.plan == "" {
		if _, err := os.Stat(filepath.Join(dir, "app.jadpo")); err != nil {
			return nil
		}
	}
	quiet := &env{stdout: discard{}, stderr: discard{}} // loadPlan's report goes nowhere
	p, err := quiet.loadPlan(dir, f)
	if err != nil {
		return nil
	}
	return p
}

// budgetStore fills in a delivery's attempt budget from the plan where the
// store holds 0 (the plan's budget applies), so it is not shown as "of 0".
type budgetStore struct {
	store.Store
	retry map[string]ir.Retry // subscriber -> its retry budget in the plan
}

func withBudgets(st store.Store, p *ir.Program) store.Store {
	if p == nil {
		return st
	}
	b := map[string]ir.Retry{}
	for _, s := range p.Subscribers {
		b[s.Name] = s.Retry
	}
	return &budgetStore{Store: st, retry: b}
}

func (s *budgetStore) fill(en *store.Entry) {
	if en.ID.Kind == store.KindDelivery {
		en.MaxAttempts = s.retry[en.Subscriber].Budget(en.MaxAttempts)
	}
}

func (s *budgetStore) List(ctx context.Context, f store.Filter) ([]store.Entry, error) {
	es, err := s.Store.List(ctx, f)
	for i := range es {
		s.fill(&es[i])
	}
	return es, err
}

func (s *budgetStore) Show(ctx context.Context, id store.ID, withBody bool) (store.Entry, error) {
	en, err := s.Store.Show(ctx, id, withBody)
	s.fill(&en)
	return en, err
}
