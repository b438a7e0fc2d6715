package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
	"github.com/jadpo/jadpo/runtime/store"
)

// Delivery engine limits.
const (
	ClaimLimit     = 32               // deliveries claimed per claim
	Lease          = 60 * time.Second // a claim's lease; a handler gets less
	HandlerTimeout = 45 * time.Second
	Workers        = 8 // handlers run at once
)

// DeliverReport counts one tick's deliveries.
type DeliverReport struct {
	Claimed, Succeeded, Retried, Failed, Lost int
	// Full: the claim came back full, so more may be due.
	Full bool
}

// deliverer runs due deliveries: claim in a short transaction, run the
// handler with no lock held, settle under the claim's fencing token.
type deliverer struct {
	r        *Runtime
	conns    map[string]*connection
	cfg      *Config
	handlers map[string]map[string]*ir.Handler // subscriber -> event name -> handler
	retry    map[string]ir.Retry
}

func newDeliverer(r *Runtime, conns map[string]*connection, cfg *Config) (*deliverer, error) {
	d := &deliverer{r: r, conns: conns, cfg: cfg, handlers: map[string]map[string]*ir.Handler{}, retry: map[string]ir.Retry{}}
	for i := range r.plan.Subscribers {
		s := &r.plan.Subscribers[i]
		d.retry[s.Name] = s.Retry
		d.handlers[s.Name] = map[string]*ir.Handler{}
		for j := range s.Handlers {
			h := &s.Handlers[j]
			for _, st := range h.Steps {
				c := conns[st.Connection]
				if c == nil {
					return nil, fmt.Errorf("subscriber %s: the plan has no connection %s", s.Name, st.Connection)
				}
				ref := st.Operation
				if ref == "send" {
					if c.plan.Email == nil {
						return nil, fmt.Errorf("subscriber %s: connection %s has no email mapping in the plan", s.Name, st.Connection)
					}
					ref = c.plan.Email.Operation
				}
				if _, ok := c.ops[ref]; !ok {
					return nil, fmt.Errorf("subscriber %s: the plan lacks operation %s of connection %s", s.Name, ref, st.Connection)
				}
			}
			d.handlers[s.Name][h.Name] = h
		}
	}
	return d, nil
}

// run claims due deliveries until none is due or a claim comes back short.
func (d *deliverer) run(ctx context.Context, rep *DeliverReport) error {
	if len(d.handlers) == 0 {
		return nil
	}
	claimed, err := d.r.store.ClaimDeliveries(ctx, d.r.now(), ClaimLimit, Lease)
	if err != nil {
		return fmt.Errorf("claiming deliveries: %w", err)
	}
	rep.Claimed += len(claimed)
	rep.Full = len(claimed) == ClaimLimit
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, Workers)
	var errs []error
	for i := range claimed {
		c := claimed[i]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcome, err := d.deliver(context.WithoutCancel(ctx), c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			switch outcome {
			case store.SettleSucceeded:
				rep.Succeeded++
			case store.SettleRetryWait:
				rep.Retried++
			case store.SettleFailed:
				rep.Failed++
			case 0:
				rep.Lost++
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deliver runs one delivery's handler and settles it. A 0 outcome means the
// lease was taken over and nothing was settled.
func (d *deliverer) deliver(ctx context.Context, c store.Claimed) (store.SettleOutcome, error) {
	h := d.handlers[c.Subscriber][c.EventName]
	code := ""
	var callErr error
	if h == nil {
		code, callErr = "handler_missing", fmt.Errorf("the plan running now has no handler of %s for %s", c.Subscriber, c.EventName)
	} else {
		hctx, cancel := context.WithTimeout(ctx, HandlerTimeout)
		callErr = d.runHandler(hctx, h, c.EventJSON)
		cancel()
	}
	s := store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleSucceeded}
	retry := d.retry[c.Subscriber]
	if callErr != nil {
		temporary := false
		code, temporary = classify(callErr, code)
		s.ErrorCode = code
		if temporary && c.Attempt < retry.MaxAttempts {
			s.Outcome = store.SettleRetryWait
			s.NextAttemptAt = d.r.now().Add(d.backoff(retry, c.Attempt))
		} else {
			s.Outcome = store.SettleFailed
		}
	}
	ok, err := d.r.store.SettleDelivery(ctx, d.r.now(), s)
	if err != nil {
		return 0, fmt.Errorf("settling delivery %d: %w", c.ID, err)
	}
	if !ok {
		d.r.log.Warn("delivery taken over by another claim; this settlement changes nothing", "delivery", c.ID, "subscriber", c.Subscriber)
		return 0, nil
	}
	d.r.metrics.deliveries.WithLabelValues(c.Subscriber, s.Outcome.String()).Inc()
	d.r.log.Info("delivery settled", "delivery", c.ID, "subscriber", c.Subscriber, "event", c.EventName,
		"message_id", c.ReceivedID, "attempt", c.Attempt, "outcome", s.Outcome.String(), "error_code", s.ErrorCode)
	return s.Outcome, nil
}

// backoff is the pause before the next attempt after attempt n: doubling
// from first_delay up to max_delay, with full jitter.
func (d *deliverer) backoff(r ir.Retry, n int) time.Duration {
	ceil := time.Duration(r.FirstDelayMS) * time.Millisecond
	maxD := time.Duration(r.MaxDelayMS) * time.Millisecond
	for i := 1; i < n && ceil < maxD; i++ {
		ceil *= 2
	}
	if ceil > maxD {
		ceil = maxD
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(d.r.rand.Int64N(int64(ceil) + 1))
}

// classify turns a handler's error into an error code and whether a retry
// may succeed.
func classify(err error, code string) (string, bool) {
	var ref *wire.Refusal
	var te *wire.TransportError
	switch {
	case code != "":
		return code, false
	case errors.As(err, &ref):
		return ref.Code, ref.Temporary
	case errors.As(err, &te):
		return "transport", true
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", true
	}
	var de *wire.DecodeError
	if errors.As(err, &de) {
		return "decode", false
	}
	return "handler", false
}

// runHandler runs each step of a handler in order.
func (d *deliverer) runHandler(ctx context.Context, h *ir.Handler, eventJSON []byte) error {
	dec := json.NewDecoder(bytes.NewReader(eventJSON))
	dec.UseNumber()
	var event map[string]any
	if err := dec.Decode(&event); err != nil {
		return fmt.Errorf("the kept event is not JSON: %w", err)
	}
	for _, st := range h.Steps {
		conn := d.conns[st.Connection]
		args := map[string]any{}
		for name, x := range st.Args {
			v, err := d.eval(x, event, eventJSON)
			if err != nil {
				return err
			}
			args[name] = v
		}
		ref, input := st.Operation, args
		if ref == "send" {
			ref = conn.plan.Email.Operation
			in := map[string]any{}
			for k, v := range conn.plan.Email.Input {
				switch {
				case v.Message != "":
					if a, ok := args[v.Message]; ok {
						in[k] = a
					}
				case v.Setting != "":
					in[k] = conn.settings[v.Setting]
				case v.Literal != nil:
					lv, err := literal(v.Literal)
					if err != nil {
						return err
					}
					in[k] = lv
				}
			}
			input = in
		}
		if _, err := conn.client.Call(ctx, conn.ops[ref], input); err != nil {
			return err
		}
	}
	return nil
}

// eval computes a handler argument from the event.
func (d *deliverer) eval(x ir.Expr, event map[string]any, eventJSON []byte) (any, error) {
	switch {
	case x.Literal != nil:
		return literal(x.Literal)
	case x.Event:
		return event, nil
	case len(x.Path) > 0:
		var cur any = event
		for _, p := range x.Path {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[p]
			case []any:
				i, err := strconv.Atoi(p)
				if err != nil || i < 0 || i >= len(c) {
					return nil, nil
				}
				cur = c[i]
			default:
				return nil, nil
			}
		}
		if n, ok := cur.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
		return cur, nil
	case x.Config != "":
		return d.cfg.value(ir.Value{Config: x.Config})
	case x.Record != nil:
		out := map[string]any{}
		for k, v := range x.Record {
			val, err := d.eval(v, event, eventJSON)
			if err != nil {
				return nil, err
			}
			out[k] = val
		}
		return out, nil
	case x.List != nil:
		out := make([]any, 0, len(x.List))
		for _, v := range x.List {
			val, err := d.eval(v, event, eventJSON)
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	case x.JSON:
		return string(eventJSON), nil
	}
	return nil, fmt.Errorf("the plan holds an argument this runtime cannot compute")
}
