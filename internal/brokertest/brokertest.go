// Package brokertest finds the message brokers a test talks to for real:
// RabbitMQ, NATS with JetStream and Redis, which every development and CI
// machine of this project runs on 127.0.0.1 beside PostgreSQL. A test skips
// with a clear message when its broker does not answer, and fails instead
// when JADPO_REQUIRE_BROKERS=1 (as .ci/run sets), so CI never passes by
// skipping. The addresses can be moved with JADPO_TEST_RABBITMQ_URL,
// JADPO_TEST_NATS_URL and JADPO_TEST_REDIS_URL.
package brokertest

import (
	"net"
	"net/url"
	"os"
	"testing"
	"time"
)

// Broker is one broker a test may need.
type Broker struct {
	// Name is the broker's, for messages.
	Name string
	// Env is the variable that moves it; Default its URL without one.
	Env, Default string
	// Start is the command that starts it on this kind of machine, for the
	// skip message.
	Start string
}

var (
	RabbitMQ = Broker{Name: "RabbitMQ", Env: "JADPO_TEST_RABBITMQ_URL", Default: "amqp://guest:guest@127.0.0.1:5672/",
		Start: "rabbitmq-server -detached"}
	NATS = Broker{Name: "NATS with JetStream", Env: "JADPO_TEST_NATS_URL", Default: "nats://127.0.0.1:4222",
		Start: "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log"}
	Redis = Broker{Name: "Redis", Env: "JADPO_TEST_REDIS_URL", Default: "redis://127.0.0.1:6379/0",
		Start: `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log`}
)

// URL is the broker's URL for tests.
func (b Broker) URL() string {
	if u := os.Getenv(b.Env); u != "" {
		return u
	}
	return b.Default
}

// Addr is the host:port of URL.
func (b Broker) Addr() string {
	u, err := url.Parse(b.URL())
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host
}

// Require skips or fails the test when the broker does not accept a TCP
// connection, and returns its URL. A client's own handshake is the test's:
// this only tells "not running" apart from a failure of the code under test.
func (b Broker) Require(tb testing.TB) string {
	tb.Helper()
	addr := b.Addr()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err == nil {
		c.Close()
		return b.URL()
	}
	msg := b.Name + " is not reachable on " + addr + " (set " + b.Env + ", or start it: " + b.Start + "): " + err.Error()
	if os.Getenv("JADPO_REQUIRE_BROKERS") == "1" {
		tb.Fatal(msg)
	}
	tb.Skip(msg + "; JADPO_REQUIRE_BROKERS=1 makes this a failure")
	return ""
}
