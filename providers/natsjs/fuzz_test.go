package natsjs

import (
	"errors"
	"strings"
	"testing"
)

// FuzzRedact: whatever the credential (a URL with a user and password or a
// token, a token member, a password member) and whatever an error's text
// around it, reading the credential never panics, and an error redacted
// holds none of its secrets.
func FuzzRedact(f *testing.F) {
	f.Add("nats://app:s3cret@127.0.0.1:4222", "t0ken-xyz", "pa55word", "nats: dial ", " failed")
	f.Add("nats://tok@h:1,tls://u:p@h2:2", "", "", "", "")
	f.Add("nats://[::1]:4222", "]abc", "x]abc", "[redacted", "]abc")
	f.Fuzz(func(t *testing.T, url, token, password, before, after string) {
		members := map[string]string{memberURL: url, memberToken: token, memberPassword: password}
		if password != "" {
			members[memberUser] = "u"
		}
		c, err := CredentialOf(members)
		if err != nil {
			for _, secret := range []string{url, token, password} {
				if len(secret) > 12 && strings.Contains(err.Error(), secret) {
					t.Fatalf("CredentialOf's error %q holds a secret", err)
				}
			}
		}
		c.URL, c.Token, c.Password = url, token, password
		s := &Source{cred: c}
		for _, secret := range c.secrets() {
			got := s.redact(errors.New(before + secret + after + secret)).Error()
			if got == withheld {
				continue
			}
			// What is left of the text besides the markers holds no secret.
			for _, part := range strings.Split(got, "[redacted]") {
				for _, other := range c.secrets() {
					if other != "" && strings.Contains(part, other) {
						t.Fatalf("redacted %q still holds %q", got, other)
					}
				}
			}
		}
	})
}
