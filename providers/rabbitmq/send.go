package rabbitmq

import (
	"context"
	"fmt"
	"net"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// Send publishes body on conn's queue, as a producer would (persistent,
// through the default exchange), and waits for the broker's confirm: jadpo
// dev's typed input. dial, when set, opens the connection (dev's, which
// stays on this machine).
func Send(ctx context.Context, conn *queue.Conn, dial func(ctx context.Context, network, addr string) (net.Conn, error), body string) error {
	st, err := SettingsOf(conn.Settings)
	if err != nil {
		return fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	raw := conn.Credentials[ir.MemberURL]
	u, err := parseURL(raw)
	if err != nil {
		return fmt.Errorf("connection %s: the credential's url is %w", conn.Name, err)
	}
	s := &Source{name: conn.Name, url: raw, dial: dial, host: net.JoinHostPort(u.Host, fmt.Sprint(u.Port))}
	if u.Password != "" {
		s.secret = []string{u.Password}
	}
	c, err := s.dialBroker(ctx)
	if err != nil {
		return s.redact(fmt.Errorf("connection %s: cannot connect to the broker at %s: %w", conn.Name, s.host, err))
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		return s.redact(err)
	}
	if _, err := ch.QueueDeclarePassive(st.Queue, true, false, false, false, nil); err != nil {
		if amqpCode(err) == amqp.NotFound && st.Declare != DeclareExisting {
			return fmt.Errorf("connection %s: the broker has no queue %q yet: the app declares it as it starts", conn.Name, st.Queue)
		}
		return fmt.Errorf("connection %s: queue %q: %s", conn.Name, st.Queue, reason(err))
	}
	if err := ch.Confirm(false); err != nil {
		return s.redact(err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", st.Queue, true, false,
		amqp.Publishing{Body: []byte(body), DeliveryMode: amqp.Persistent})
	if err != nil {
		return s.redact(err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return s.redact(err)
	}
	if !ok {
		return fmt.Errorf("connection %s: the broker refused the message for queue %q", conn.Name, st.Queue)
	}
	return nil
}
