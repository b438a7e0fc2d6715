package redisstreams

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/ir"
)

// The settings the driver reads (docs/guide/receiving.md, "Redis
// Streams"): the contract holds the package to them, and SettingsOf reads
// them.
const (
	settingStream        = "stream"
	settingGroup         = "group"
	settingCreateGroup   = "create_group"
	settingField         = "field"
	settingClaimIdle     = "claim_idle"
	settingMaxDeliveries = "max_deliveries"
	settingBlock         = "block"
)

// Defaults, for settings a connection's plan lacks (the catalogue package
// declares the same).
const (
	DefaultField         = "body"
	DefaultClaimIdle     = 30 * time.Second
	DefaultMaxDeliveries = 10
	// MinClaimIdle is the shortest claim_idle: an entry is reclaimed from a
	// consumer only after it was held this long, so a claim_idle shorter
	// than a batch takes to keep would hand batches in flight to another
	// consumer (received twice; the second a repeat).
	MinClaimIdle = time.Second
	// MaxBlock is the longest block (SQS's longest long poll too).
	MaxBlock = 20 * time.Second
)

// Settings are a connection's settings as the driver reads them.
type Settings struct {
	// Stream is the stream's key; Group its consumer group.
	Stream, Group string
	// CreateGroup: create the group (from the stream's first entry, with
	// MKSTREAM) when it does not exist; else a missing group stops the start.
	CreateGroup bool
	// Field is the entry's field holding the body.
	Field string
	// ClaimIdle is how long an entry is pending to a consumer before
	// another may reclaim it (XAUTOCLAIM's min-idle-time): the stream's
	// visibility timeout.
	ClaimIdle time.Duration
	// MaxDeliveries: an entry delivered more times than this is parked
	// (0: never; it stays pending, reclaimed after each claim_idle).
	MaxDeliveries int64
	// Block is how long a receive that finds nothing waits for an entry
	// (XREADGROUP's BLOCK), bounded by the tick's budget; 0: it does not.
	Block time.Duration
}

// SettingsOf reads a redis_streams connection's settings (their values
// resolved: text, a bool, an int, a duration's text).
func SettingsOf(settings map[string]any) (Settings, error) {
	s := Settings{Field: DefaultField, ClaimIdle: DefaultClaimIdle, MaxDeliveries: DefaultMaxDeliveries}
	str := func(name string) (string, bool) {
		v, ok := settings[name]
		if !ok || v == nil {
			return "", false
		}
		switch x := v.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		default:
			return fmt.Sprint(x), true
		}
	}
	s.Stream, _ = str(settingStream)
	s.Group, _ = str(settingGroup)
	if s.Stream == "" {
		return s, fmt.Errorf("setting %s is empty: give the stream's key, such as \"orders\"", settingStream)
	}
	if s.Group == "" {
		return s, fmt.Errorf("setting %s is empty: give the consumer group's name, such as \"jadpo\"", settingGroup)
	}
	if f, ok := str(settingField); ok {
		if f == "" {
			return s, fmt.Errorf("setting %s is empty: give the entry's field holding the body, or leave it out for %q", settingField, DefaultField)
		}
		s.Field = f
	}
	if v, ok := settings[settingCreateGroup]; ok && v != nil {
		switch x := v.(type) {
		case bool:
			s.CreateGroup = x
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return s, fmt.Errorf("setting %s: %q is not true or false", settingCreateGroup, x)
			}
			s.CreateGroup = b
		default:
			return s, fmt.Errorf("setting %s: %v is not true or false", settingCreateGroup, v)
		}
	}
	duration := func(name string, d *time.Duration) error {
		t, ok := str(name)
		if !ok {
			return nil
		}
		v, err := ir.ParseDuration(t)
		if err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
		*d = v
		return nil
	}
	if err := duration(settingClaimIdle, &s.ClaimIdle); err != nil {
		return s, err
	}
	if s.ClaimIdle < MinClaimIdle {
		return s, fmt.Errorf("setting %s: %s is shorter than %s: an entry is reclaimed from a consumer that held it this long, "+
			"so it must outlast keeping a batch; give at least %s, such as 30s", settingClaimIdle, s.ClaimIdle, MinClaimIdle, MinClaimIdle)
	}
	if err := duration(settingBlock, &s.Block); err != nil {
		return s, err
	}
	if s.Block < 0 || s.Block > MaxBlock {
		return s, fmt.Errorf("setting %s: %s is not between 0s and %s", settingBlock, s.Block, MaxBlock)
	}
	if t, ok := str(settingMaxDeliveries); ok {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 0 {
			return s, fmt.Errorf("setting %s: %q is not a whole number of at least 0 (0: never park)", settingMaxDeliveries, t)
		}
		s.MaxDeliveries = n
	}
	return s, nil
}

// ClientOptions reads the credential's URL as go-redis reads it
// (redis://[user:password@]host:port/db, rediss:// for TLS, unix://path).
// An error says only what is wrong, never quoting the URL: it may hold a
// password.
func ClientOptions(rawURL string) (*redis.Options, error) {
	const forms = "redis://[user:password@]host:port/db, rediss://... for TLS, or unix:///path/to/redis.sock"
	if rawURL == "" {
		return nil, fmt.Errorf("the credential's url is empty: give %s", forms)
	}
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch strings.ToLower(scheme) {
	case "redis", "rediss", "unix":
	default:
		return nil, fmt.Errorf("the credential's url is not a Redis URL: write %s", forms)
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		// Neither url.Error nor go-redis's own errors are shown: they quote
		// the URL or a part of it (the path, an option), which a mistyped
		// URL can make hold the password (FuzzCredentialURL found one).
		var ue *url.Error
		msg := err.Error()
		what := "cannot be read as a Redis URL"
		switch {
		case errors.As(err, &ue):
			what = "cannot be read as a URL"
		case strings.Contains(msg, "invalid database number"):
			what = "has a database number (its path, such as /0) that is not one"
		case strings.Contains(msg, "invalid URL path"):
			what = "has a path that is not one database number (such as /0)"
		case strings.Contains(msg, "unexpected option"):
			what = "has a query option go-redis does not know"
		case strings.Contains(msg, "invalid"):
			what = "has a query option whose value is not one"
		}
		return nil, fmt.Errorf("the credential's url %s: write %s", what, forms)
	}
	return o, nil
}
