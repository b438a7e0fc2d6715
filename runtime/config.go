package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jadpo/jadpo/check/ir"
)

// Config holds the app's config values, read once at start-up. Its String
// and fmt forms never show a value.
type Config struct {
	values  map[string]any
	secrets []string
}

// Format keeps values out of any printed form, of a *Config or a Config.
func (c Config) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "runtime.Config{%d values}", len(c.values))
}

// Secrets lists the secret values, for tests that prove none is printed.
func (c *Config) Secrets() []string { return c.secrets }

// ConfigError names the field and binding whose value is missing or
// invalid, never the value.
type ConfigError struct {
	Field, Binding, Problem string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("config field %s (environment variable %s) %s", e.Field, e.Binding, e.Problem)
}

// MaxDotenvSize is the largest .env.local read: 1 MiB.
const MaxDotenvSize = 1 << 20

// readDotenv reads the .env.local at path when it is a regular file of at
// most MaxDotenvSize bytes: a named pipe would hang the start, a huge file is
// not a .env. It opens without blocking and then looks at what it opened, so
// a pipe swapped in is refused too. (lang/source makes the same refusal for
// source files; the runtime reads no source and imports nothing of lang.)
func readDotenv(path string) ([]byte, error) {
	refuse := func(what string) error {
		return fmt.Errorf("cannot read %s: it %s; .env.local must be a regular file of at most %d MiB", path, what, MaxDotenvSize>>20)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		if st.Mode()&fs.ModeNamedPipe != 0 {
			return nil, refuse("is a named pipe, not a regular file")
		}
		return nil, refuse("is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxDotenvSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if len(b) > MaxDotenvSize {
		return nil, refuse(fmt.Sprintf("is over the limit of %d MiB", MaxDotenvSize>>20))
	}
	return b, nil
}

// LoadConfig reads each config field from environ (KEY=value entries), then
// from the .env.local file at dotenv (absent is fine), then its default.
func LoadConfig(p *ir.Program, environ []string, dotenv string) (*Config, error) {
	env := map[string]string{}
	if b, err := readDotenv(dotenv); err == nil {
		local, err := parseDotenv(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dotenv, err)
		}
		env = local
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v // the process environment wins over .env.local
		}
	}
	c := &Config{values: map[string]any{}}
	var errs []error
	for _, f := range p.Config {
		raw, ok := env[f.Binding]
		if !ok || raw == "" && !f.Type.Optional {
			if f.Default != nil {
				v, err := ir.DecodeLiteral(f.Default)
				if err != nil {
					return nil, err
				}
				c.values[f.Name] = v
				continue
			}
			if f.Type.Optional {
				c.values[f.Name] = nil
				continue
			}
			errs = append(errs, &ConfigError{Field: f.Name, Binding: f.Binding, Problem: "is not set (in the environment or .env.local)"})
			continue
		}
		v, problem := parseConfigValue(raw, f.Type)
		if problem != "" {
			errs = append(errs, &ConfigError{Field: f.Name, Binding: f.Binding, Problem: problem})
			continue
		}
		if f.Secret && raw != "" {
			c.secrets = append(c.secrets, raw)
		}
		c.values[f.Name] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// parseDotenv reads NAME=value lines; # starts a comment line; a value may
// be wrapped in single or double quotes.
func parseDotenv(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for n, raw := range strings.Split(string(b), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d is not NAME=value", n+1)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// parseConfigValue reads an environment value as its field's type, after
// ir.ValueProblem has held it to every rule of the type: the ones the checker
// holds a default to. The problem never repeats the value.
func parseConfigValue(raw string, t ir.Type) (any, string) {
	if p := ir.ValueProblem(t, raw); p != "" {
		return nil, p
	}
	switch t.Kind {
	case ir.Int:
		v, _ := strconv.ParseInt(raw, 10, 64)
		return v, ""
	case ir.Decimal:
		return json.Number(raw), ""
	case ir.Bool:
		v, _ := strconv.ParseBool(raw)
		return v, ""
	}
	return raw, ""
}

// value resolves a plan value to a Go value.
func (c *Config) value(v ir.Value) (any, error) {
	switch {
	case v.Config != "":
		val, ok := c.values[v.Config]
		if !ok {
			return nil, fmt.Errorf("the plan names config field %s, which it does not declare", v.Config)
		}
		return val, nil
	case v.Literal != nil:
		return ir.DecodeLiteral(v.Literal)
	}
	return nil, fmt.Errorf("the plan holds a value this runtime cannot resolve here")
}

// text renders a resolved value as text (settings in paths, hosts, credentials).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Settings resolves the values of a connection's settings (the first
// missing one, by name, is the error).
func (c *Config) Settings(conn *ir.Connection) (map[string]any, error) {
	names := make([]string, 0, len(conn.Settings))
	for k := range conn.Settings {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]any, len(names))
	for _, k := range names {
		val, err := c.value(conn.Settings[k])
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

// Value resolves a plan value (a config reference or a literal).
func (c *Config) Value(v ir.Value) (any, error) { return c.value(v) }

// EmptyConfig holds no values: for commands that only read the store.
func EmptyConfig() *Config { return &Config{values: map[string]any{}} }
