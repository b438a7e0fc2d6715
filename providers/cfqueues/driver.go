package cfqueues

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/providers/queue"
)

// Driver is the cloudflare_queues driver (providers.Drivers registers it).
var Driver = queue.Driver{Contract: contract, Open: Open, StandIn: startStandIn}

// contract is the driver's contract (docs/guide/receiving.md, "Cloudflare
// Queues"): it pulls with batch_size and visibility_timeout_ms, reads each
// leased message's id, body and lease_id, and answers a batch with one ack
// listing the acknowledged leases and the ones handed back. The pull asks
// for a batch as large as the tick's (10) and leases for the package's
// visibility_timeout_ms setting, when it declares one.
var contract = ir.DriverContract{
	Name: ir.DriverCloudflareQueues,
	Help: "declare the operations and members as the catalogue's CloudflareQueues.v4 does (`jadpo package add CloudflareQueues.v4`)",
	Receive: &ir.DriverCall{Operation: "messages.pull",
		Input: []ir.DriverMember{{Path: "batch_size", Kind: ir.Int}, {Path: "visibility_timeout_ms", Kind: ir.Int}},
		Output: []ir.DriverMember{{Path: "result.messages[].id", Kind: ir.Text}, {Path: "result.messages[].body", Kind: ir.Text},
			{Path: "result.messages[].lease_id", Kind: ir.Text}},
		Fixed:        map[string]ir.Value{"batch_size": {Literal: []byte(strconv.Itoa(10))}},
		FromSettings: []string{"visibility_timeout_ms"},
	},
	Acknowledge: &ir.DriverCall{Operation: "messages.ack",
		Input: []ir.DriverMember{{Path: "acks[].lease_id", Kind: ir.Text}, {Path: "retries[].lease_id", Kind: ir.Text},
			{Path: "retries[].delay_seconds", Kind: ir.Int}}},
}

// standIn is the driver's stand-in for `jadpo dev`: a Cloudflare Queues
// fake on this machine, a queue of it for each connection.
type standIn struct {
	srv    *cfqueuesfake.Server
	queues map[string][2]string // by connection: its account id and queue id on the fake
}

func startStandIn() (queue.StandIn, error) {
	srv, err := cfqueuesfake.Start("", cfqueuesfake.Options{})
	if err != nil {
		return nil, fmt.Errorf("cannot start the Cloudflare Queues fake: %w", err)
	}
	return &standIn{srv: srv, queues: map[string][2]string{}}, nil
}

// Wire points a connection's host and token (written as config or
// literally) at the fake, and its account_id and queue_id when they come
// from config (a literal one is used as it is: it names the queue on the
// fake).
func (s *standIn) Wire(c *ir.Connection) (queue.Wiring, error) {
	w := queue.Wiring{Host: s.srv.URL, Credential: map[string]string{ir.MemberToken: cfqueuesfake.DefaultToken}, Settings: map[string]string{}}
	ids := [2]string{"dev-account", c.Name}
	for i, name := range []string{"account_id", "queue_id"} {
		v := c.Settings[name]
		switch {
		case v.Config != "":
			w.Settings[name] = ids[i]
		case v.Literal != nil:
			if err := json.Unmarshal(v.Literal, &ids[i]); err != nil {
				return w, fmt.Errorf("connection %s: setting %s: %w", c.Name, name, err)
			}
		}
	}
	if err := s.srv.CreateQueue(ids[0], ids[1], cfqueuesfake.QueueOptions{}); err != nil {
		return w, err
	}
	s.queues[c.Name] = ids
	return w, nil
}

func (s *standIn) Send(_ context.Context, conn, body string) (bool, error) {
	ids, ok := s.queues[conn]
	if !ok {
		return false, nil
	}
	_, err := s.srv.Send(ids[0], ids[1], body)
	return true, err
}

func (s *standIn) Queues() []string {
	out := make([]string, 0, len(s.queues))
	for q := range s.queues {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

func (s *standIn) Describe() string { return "Cloudflare Queues fake on " + s.srv.URL }

func (s *standIn) Close() { s.srv.Close() }
