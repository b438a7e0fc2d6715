package runtime_test

// Config loading (docs/reference/language.md, "config"): values come from the process
// environment, then .env.local, then the field's default; a required value
// missing or invalid names the field and binding and never the value.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime"
)

// configPlan is the example with three more fields: a secret database URL,
// a whole number and an optional text.
func configPlan(t *testing.T) *ir.Program {
	return checktest.ExamplePlan(t, "warehouse", checktest.Edit{File: "app.jadpo",
		Old: `    packing_host: Url { binding: "PACKING_HOST" default: "https://packing.example.com" }`,
		New: `    packing_host: Url { binding: "PACKING_HOST" default: "https://packing.example.com" }
    database_url: Url { binding: "SHOP_DATABASE_URL" secret: true }
    batch_size: Int { binding: "BATCH_SIZE" default: 10 }
    greeting: Text? { binding: "GREETING" }`})
}

// required are the example's config entries without a default, plus the
// configPlan's secret URL.
var required = []string{
	"AWS_ACCESS_KEY_ID=AKID-from-env",
	"AWS_SECRET_ACCESS_KEY=secret-from-env",
	"WAREHOUSE_QUEUE_URL=https://sqs.example.com/1/warehouse",
	"RETURNS_QUEUE_URL=https://sqs.example.com/1/returns",
	"PACKING_TOKEN=token-from-env",
	"SHOP_DATABASE_URL=postgres://shop:pw-from-env@db.example.com/shop",
}

func writeDotenv(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env.local")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func configValue(t *testing.T, c *runtime.Config, field string) any {
	t.Helper()
	v, err := c.Value(ir.Value{Config: field})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func without(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}

func TestConfigEnvironmentWinsOverDotenv(t *testing.T) {
	p := configPlan(t)
	dotenv := writeDotenv(t, "AWS_ACCESS_KEY_ID=AKID-from-file\nPACKING_ACCOUNT=account-from-file\nBATCH_SIZE=25\n")
	env := append(slices.Clone(required), "BATCH_SIZE=30")
	c, err := runtime.LoadConfig(p, env, dotenv)
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"aws_access_key_id": "AKID-from-env",     // both: the environment wins
		"packing_account":   "account-from-file", // only in .env.local
		"batch_size":        int64(30),           // both, typed
	} {
		if got := configValue(t, c, field); got != want {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	// Only in .env.local, a required value is enough.
	c, err = runtime.LoadConfig(p, without(required, "PACKING_TOKEN"), writeDotenv(t, "PACKING_TOKEN=token-from-file\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := configValue(t, c, "packing_token"); got != "token-from-file" {
		t.Errorf("packing_token = %#v", got)
	}
}

func TestConfigDefaults(t *testing.T) {
	p := configPlan(t)
	c, err := runtime.LoadConfig(p, required, filepath.Join(t.TempDir(), ".env.local")) // no file: fine
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"sqs_host":        "https://sqs.eu-west-1.amazonaws.com",
		"packing_account": "warehouse-1",
		"packing_host":    "https://packing.example.com",
		"batch_size":      int64(10),
		"greeting":        nil, // optional, unset
	} {
		if got := configValue(t, c, field); got != want {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	// An empty value of a field with a default is the default.
	c, err = runtime.LoadConfig(p, append(slices.Clone(required), "PACKING_ACCOUNT="), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := configValue(t, c, "packing_account"); got != "warehouse-1" {
		t.Errorf("packing_account = %#v", got)
	}
}

func TestConfigMissingOrInvalidNamesFieldAndBindingNeverTheValue(t *testing.T) {
	p := configPlan(t)
	cases := []struct {
		name    string
		env     []string
		dotenv  string
		want    []string // ConfigErrors as field/binding/problem
		secrets []string // text that must not appear in the error
	}{
		{name: "required missing", env: without(required, "AWS_SECRET_ACCESS_KEY"),
			want: []string{"aws_secret_access_key/AWS_SECRET_ACCESS_KEY/is not set (in the environment or .env.local)"}},
		{name: "required empty", env: append(without(required, "PACKING_TOKEN"), "PACKING_TOKEN="),
			want: []string{"packing_token/PACKING_TOKEN/is not set (in the environment or .env.local)"}},
		{name: "every missing one named", env: without(without(required, "WAREHOUSE_QUEUE_URL"), "RETURNS_QUEUE_URL"),
			want: []string{
				"returns_queue_url/RETURNS_QUEUE_URL/is not set (in the environment or .env.local)",
				"warehouse_queue_url/WAREHOUSE_QUEUE_URL/is not set (in the environment or .env.local)",
			}},
		{name: "secret url invalid", env: append(without(required, "SHOP_DATABASE_URL"), "SHOP_DATABASE_URL=pw-in-a-bad-url:CANARY-dburl"),
			want:    []string{"database_url/SHOP_DATABASE_URL/is not an absolute URL (scheme and host, such as https://example.com)"},
			secrets: []string{"CANARY-dburl", "pw-in-a-bad-url"}},
		{name: "invalid in .env.local", env: without(required, "WAREHOUSE_QUEUE_URL"), dotenv: "WAREHOUSE_QUEUE_URL=warehouse-CANARY-q\n",
			want: []string{"warehouse_queue_url/WAREHOUSE_QUEUE_URL/is not an absolute URL (scheme and host, such as https://example.com)"}, secrets: []string{"warehouse-CANARY-q"}},
		{name: "whole number invalid", env: append(slices.Clone(required), "BATCH_SIZE=12.5-CANARY"),
			want: []string{"batch_size/BATCH_SIZE/is not a whole number: write digits, such as 10, from -9223372036854775808 to 9223372036854775807"}, secrets: []string{"12.5-CANARY"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runtime.LoadConfig(p, c.env, writeDotenv(t, c.dotenv))
			if err == nil {
				t.Fatal("loaded")
			}
			var got []string
			for _, e := range unjoin(err) {
				var ce *runtime.ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("%v is not a *ConfigError", e)
				}
				got = append(got, ce.Field+"/"+ce.Binding+"/"+ce.Problem)
				if !strings.Contains(ce.Error(), ce.Field) || !strings.Contains(ce.Error(), ce.Binding) {
					t.Errorf("%q does not name field and binding", ce.Error())
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("errors %q\nwant %q", got, c.want)
			}
			for _, s := range append(c.secrets, "secret-from-env", "token-from-env", "pw-from-env") {
				if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), s) {
					t.Fatalf("the error shows a value: %v", err)
				}
			}
		})
	}
}

// TestConfigRulesAtStart: a value from the environment is held to every
// rule the checker holds a default to (ir.ValueProblem), not only to its
// kind: `BATCH_LIMIT=-5` for `Int { min: 1 }` and `REGION=XX` against a
// pattern stop the start, naming the field, its binding and what fits, and
// a secret's value is never shown.
func TestConfigRulesAtStart(t *testing.T) {
	p := checktest.ExamplePlan(t, "warehouse", checktest.Edit{File: "app.jadpo",
		Old: `    packing_host: Url { binding: "PACKING_HOST" default: "https://packing.example.com" }`,
		New: `    packing_host: Url { binding: "PACKING_HOST" default: "https://packing.example.com" }
    batch_limit: Int { binding: "BATCH_LIMIT" min: 1 max: 500 default: 10 }
    ratio: Decimal { binding: "RATIO" min: 0 max: 1 default: 0.5 }
    region: Text { binding: "REGION" pattern: "[a-z]{2}-[a-z]+-[0-9]" default: "eu-west-1" }
    code: Text { binding: "CODE" min_length: 2 max_length: 4 default: "ab" }
    contact: Email { binding: "CONTACT" default: "ops@example.com" }
    api_key: Text? { binding: "API_KEY" secret: true min_length: 20 }
    grace: Duration { binding: "GRACE" default: 30s }`})
	base := slices.Clone(required[:5])
	cases := []struct {
		env, want string
	}{
		{"BATCH_LIMIT=-5", "batch_limit/BATCH_LIMIT/is below the minimum 1"},
		{"BATCH_LIMIT=501", "batch_limit/BATCH_LIMIT/is above the maximum 500"},
		{"RATIO=1.5", "ratio/RATIO/is above the maximum 1"},
		{"RATIO=NaN", "ratio/RATIO/is not a number: write digits with an optional fraction, such as 12.50"},
		{"REGION=XX", "region/REGION/does not match the pattern `[a-z]{2}-[a-z]+-[0-9]`"},
		{"CODE=abcde", "code/CODE/is longer than the maximum length 4"},
		{"CODE=z", "code/CODE/is shorter than the minimum length 2"},
		{"CONTACT=‮moc.live@ann", "contact/CONTACT/is not an email address (a bare address such as ann@example.com, without control or bidirectional characters)"},
		{"API_KEY=CANARY-short", "api_key/API_KEY/is shorter than the minimum length 20"},
		{"GRACE=30 seconds", "grace/GRACE/is not a duration: write " + ir.DurationGrammar},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			_, err := runtime.LoadConfig(p, append(slices.Clone(base), c.env), "")
			if err == nil {
				t.Fatal("loaded")
			}
			var ce *runtime.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%v is not a *ConfigError", err)
			}
			if got := ce.Field + "/" + ce.Binding + "/" + ce.Problem; got != c.want {
				t.Fatalf("error %q\nwant  %q", got, c.want)
			}
			if _, v, _ := strings.Cut(c.env, "="); strings.Contains(fmt.Sprintf("%v %+v", err, err), v) {
				t.Fatalf("the error shows the value: %v", err)
			}
		})
	}
	// Values that fit every rule start.
	c, err := runtime.LoadConfig(p, append(slices.Clone(base), "BATCH_LIMIT=500", "REGION=us-east-2", "RATIO=0.25", "API_KEY=0123456789abcdefghij"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := configValue(t, c, "batch_limit"); got != int64(500) {
		t.Errorf("batch_limit = %#v", got)
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestConfigDotenvQuoting(t *testing.T) {
	p := configPlan(t)
	dotenv := writeDotenv(t, strings.Join([]string{
		"# a comment line",
		"",
		`AWS_ACCESS_KEY_ID="AKID with spaces"`,
		`AWS_SECRET_ACCESS_KEY='single # not a comment = and equals'`,
		`export PACKING_TOKEN="exported"`,
		`  PACKING_ACCOUNT =  padded  `,
		`GREETING=""`,
		`WAREHOUSE_QUEUE_URL=https://sqs.example.com/1/w?a=b`,
		`RETURNS_QUEUE_URL="https://sqs.example.com/1/r"`,
		`SHOP_DATABASE_URL='postgres://u:p@h/d'`,
		`BATCH_SIZE="7"`,
		`SQS_HOST="unbalanced`,
	}, "\n"))
	_, err := runtime.LoadConfig(p, nil, dotenv)
	if err == nil {
		t.Fatal(`SQS_HOST="unbalanced should be an invalid URL, quote and all`)
	}
	if strings.Contains(err.Error(), "unbalanced") || !strings.Contains(err.Error(), "SQS_HOST") {
		t.Fatalf("error %v", err)
	}
	dotenv = writeDotenv(t, strings.Replace(string(must(os.ReadFile(dotenv))), `SQS_HOST="unbalanced`, `SQS_HOST="http://127.0.0.1:9324"`, 1))
	c, err := runtime.LoadConfig(p, nil, dotenv)
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"aws_access_key_id":     "AKID with spaces",
		"aws_secret_access_key": "single # not a comment = and equals",
		"packing_token":         "exported",
		"packing_account":       "padded",
		"greeting":              "",
		"warehouse_queue_url":   "https://sqs.example.com/1/w?a=b",
		"returns_queue_url":     "https://sqs.example.com/1/r",
		"database_url":          "postgres://u:p@h/d",
		"batch_size":            int64(7),
		"sqs_host":              "http://127.0.0.1:9324",
	} {
		if got := configValue(t, c, field); got != want {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	secrets := c.Secrets()
	slices.Sort(secrets)
	if want := []string{"exported", "postgres://u:p@h/d", "single # not a comment = and equals"}; !slices.Equal(secrets, want) {
		t.Errorf("secrets %q, want %q", secrets, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestConfigDotenvBadLineNamesTheLineNotItsText(t *testing.T) {
	p := configPlan(t)
	_, err := runtime.LoadConfig(p, required, writeDotenv(t, "A=1\nCANARY-no-equals-sign\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("error %v", err)
	}
	// A .env.local that cannot be read (a folder) is an error, not an empty file.
	dir := filepath.Join(t.TempDir(), ".env.local")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.LoadConfig(p, required, dir); err == nil {
		t.Fatal("an unreadable .env.local was ignored")
	}
}

func TestConfigPrintsNoValue(t *testing.T) {
	p := configPlan(t)
	c, err := runtime.LoadConfig(p, required, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %q", c, c, c, c, c), fmt.Sprintf("%v", *c)} {
		for _, v := range []string{"secret-from-env", "token-from-env", "pw-from-env", "AKID-from-env"} {
			if strings.Contains(s, v) {
				t.Fatalf("%q shows a value", s)
			}
		}
	}
}

// Issue 11, point 7: a named pipe as .env.local hung `jadpo run` before it
// started. Only a regular file of at most 1 MiB is read; anything else is
// an error naming the file and the rule.
func TestConfigDotenvOnlyABoundedRegularFile(t *testing.T) {
	p := configPlan(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".env.local")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := runtime.LoadConfig(p, required, fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a named pipe, not a regular file") || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("a named pipe: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("LoadConfig blocked on a named pipe")
	}
	big := writeDotenv(t, strings.Repeat("# padding\n", runtime.MaxDotenvSize/10+1))
	if _, err := runtime.LoadConfig(p, required, big); err == nil || !strings.Contains(err.Error(), "over the limit of 1 MiB") {
		t.Fatalf("a file over 1 MiB: %v", err)
	}
}
