package runtime_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// startJobs starts the jobs example, its app.jadpo edited, on an inbox table
// with a locked_until column, and returns runtime.New's error.
func startJobs(t *testing.T, plan *ir.Program, environ ...string) error {
	t.Helper()
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	url := pgtest.FreshURL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), jobsSchema); err != nil {
		t.Fatal(err)
	}
	env.SetEnv("JOBS_DATABASE_URL", url)
	cfg, err := runtime.LoadConfig(plan, append(env.Environ, environ...), filepath.Join(t.TempDir(), ".env.local"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{Plan: plan, Store: env.Store(), Config: cfg})
	if err == nil {
		rt.Close()
	}
	return err
}

// Issue 11, point 11: what `check` accepts the runtime takes. `lease: 1d`
// and `30d` passed check and then failed the start (`"1d" is not a
// duration`): the runtime now reads durations with the checker's grammar.
func TestLeaseInDaysStarts(t *testing.T) {
	for _, lease := range []string{"1d", "30d"} {
		t.Run(lease, func(t *testing.T) {
			plan := jobsPlan(t, checktest.Edit{Old: `columns: "note"`, New: `columns: "note"
        claim: lease
        locked_until: "locked_until"
        lease: ` + lease})
			if err := startJobs(t, plan); err != nil {
				t.Fatalf("lease %s: %v", lease, err)
			}
		})
	}
}

// A Duration config field takes the language's durations too (`1d`), and
// refuses what the language does not write (`1h30m`, `1.5s`).
func TestDurationConfigValuesShareTheGrammar(t *testing.T) {
	plan := jobsPlan(t,
		checktest.Edit{Old: `jobs_database_url: Url { binding: "JOBS_DATABASE_URL" secret: true }`, New: `jobs_database_url: Url { binding: "JOBS_DATABASE_URL" secret: true }
    jobs_lease: Duration { binding: "JOBS_LEASE" }`},
		checktest.Edit{Old: `columns: "note"`, New: `columns: "note"
        claim: lease
        locked_until: "locked_until"
        lease: config.jobs_lease`})
	if err := startJobs(t, plan, "JOBS_LEASE=1d"); err != nil {
		t.Fatalf("JOBS_LEASE=1d: %v", err)
	}
	for _, bad := range []string{"1h30m", "1.5s", "0s"} {
		env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
		env.SetEnv("JOBS_DATABASE_URL", "postgres://u@127.0.0.1:1/x")
		env.SetEnv("JOBS_LEASE", bad)
		cfg, err := runtime.LoadConfig(plan, env.Environ, filepath.Join(t.TempDir(), ".env.local"))
		if err == nil {
			_, err = runtime.New(runtime.Options{Plan: plan, Store: env.Store(), Config: cfg})
		}
		want := "is not a duration: write a whole number of ms, s, m, h or d"
		if bad == "0s" {
			want = `setting lease: "0s" holds no row`
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("JOBS_LEASE=%s: %v, want %q", bad, err, want)
		}
		t.Logf("JOBS_LEASE=%s: %v", bad, err)
	}
}

// Issue 11, point 12: a SQL inbox's start errors name the setting as the
// user wrote it, never a Go field (`Headers[0]`, `LockKey`). `jadpo check`
// reports these when the settings are literals (the goldens
// connection_sql_*); given config fields, only the start sees them.
func TestSQLInboxStartErrorsNameTheSetting(t *testing.T) {
	cases := []struct {
		settings     string // in place of `columns: "note"`
		field, value string // the config field the settings name, and its value ("": its default, "")
		want         string
	}{
		{`columns: config.jobs_columns`, "jobs_columns", "tenant",
			`column "tenant" is named by both setting headers and setting columns`},
		{`columns: "note"
        lock_key: config.jobs_lock_key`, "jobs_lock_key", "tenant",
			`setting lock_key is only for claim: advisory_lock (claim is row_lock)`},
		{`columns: "note"
        claim: lease
        locked_until: config.jobs_locked_until`, "jobs_locked_until", "",
			`claim: lease needs the setting locked_until`},
	}
	for _, c := range cases {
		binding := strings.ToUpper(c.field)
		field := c.field + `: Text { binding: "` + binding + `" }`
		if c.value == "" {
			field = c.field + `: Text { binding: "` + binding + `" default: "" }`
		}
		plan := jobsPlan(t,
			checktest.Edit{Old: `jobs_database_url: Url { binding: "JOBS_DATABASE_URL" secret: true }`, New: `jobs_database_url: Url { binding: "JOBS_DATABASE_URL" secret: true }
    ` + field},
			checktest.Edit{Old: `columns: "note"`, New: c.settings})
		var environ []string
		if c.value != "" {
			environ = append(environ, binding+"="+c.value)
		}
		err := startJobs(t, plan, environ...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s=%s: start error %v, want %q", binding, c.value, err, c.want)
		}
		for _, goName := range []string{"Headers[", "Columns[", "LockKey", "LockedUntil", "Form"} {
			if strings.Contains(err.Error(), goName) {
				t.Fatalf("the start error names the Go field %s: %v", goName, err)
			}
		}
	}
}

// Issue 11, point 12: `schema: ""` is documented (SqlInbox.v1's settings) as
// the connection's search_path; check refused it (SqlName's pattern), and
// the runtime takes it as no schema.
func TestSQLInboxEmptySchemaIsTheSearchPath(t *testing.T) {
	plan := jobsPlan(t, checktest.Edit{Old: `columns: "note"`, New: `columns: "note"
        schema: ""`})
	if err := startJobs(t, plan); err != nil {
		t.Fatalf(`schema: "": %v`, err)
	}
}
