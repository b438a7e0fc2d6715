package rabbitmq_test

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/providers/rabbitmq"
)

// FuzzRemoteHost reads broker URLs as dev does: it never panics, an error
// never quotes the URL's password, and a host it calls remote is not a
// loopback one.
func FuzzRemoteHost(f *testing.F) {
	for _, s := range []string{"amqp://guest:guest@127.0.0.1:5672/", "amqps://u:p@[::1]:5671/%2f", "amqp://u:p@rabbit.example.com/v",
		"amqp://u:p%40ss@host:notaport/", "amqp://:@/", "AMQP://LOCALHOST", "amqp://u:p@host/ x", "amqp://u:p@127.0.0.1.nip.io/"} {
		f.Add(s, "s3cret-pw")
	}
	f.Fuzz(func(t *testing.T, raw, pw string) {
		if len(pw) < 4 || strings.ContainsAny(pw, "@/:?#[]%") {
			return
		}
		raw = strings.Replace(raw, "guest@", url.QueryEscape(pw)+"@", 1)
		host, err := rabbitmq.RemoteHost(raw)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("the error quotes the password: %v", err)
			}
			return
		}
		h := strings.TrimSuffix(strings.Trim(host, "[]"), ".")
		if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || strings.EqualFold(h, "localhost") {
			t.Fatalf("%q is on this machine, called remote", host)
		}
	})
}
