package sqsfake

import (
	"math/rand"
	"sync"
	"time"
)

// Fault is a failure the fake can inject into a call that passed the
// signature check.
type Fault int

// The faults.
const (
	FaultNone Fault = iota
	// FaultServerError answers HTTP 500 InternalFailure.
	FaultServerError
	// FaultUnavailable answers HTTP 503 ServiceUnavailable.
	FaultUnavailable
	// FaultThrottle answers HTTP 400 com.amazonaws.sqs#RequestThrottled
	// (x-amzn-query-error: RequestThrottled;Sender), SQS's own throttling.
	FaultThrottle
	// FaultSlow answers normally after the rule's Delay (real time, not the
	// fake's clock: it is for client timeouts).
	FaultSlow
	// FaultDrop closes the connection without acting or answering.
	FaultDrop
	// FaultDropAfter acts on the request, then closes the connection without
	// answering: the client cannot know the call took effect.
	FaultDropAfter
	// FaultHang never answers: the call is held until the client gives up
	// (its context or timeout), and nothing is done.
	FaultHang
	// FaultEntryFailed fails entries of a DeleteMessageBatch call, not the
	// call: the answer is 200 and lists each such entry under Failed
	// (InternalError, not the sender's fault), its message left in place.
	// Next counts entries, Fraction is each entry's chance.
	FaultEntryFailed
)

// FaultRule injects Kind into calls: the next Next matching calls, or (with
// Next 0) each matching call with probability Fraction.
type FaultRule struct {
	Kind Fault
	// Operation limits the rule to one operation ("ReceiveMessage"); ""
	// matches every call.
	Operation string
	// Queue limits the rule to calls naming that queue (by name, as in
	// CreateQueue) in their QueueUrl; "" matches every queue.
	Queue    string
	Next     int
	Fraction float64
	// Delay is FaultSlow's pause; 0 means 2 s.
	Delay time.Duration
}

type faultState struct {
	mu    sync.Mutex
	rules []*FaultRule
	rng   *rand.Rand
}

func (s *faultState) init(seed int64) { s.rng = rand.New(rand.NewSource(seed)) }

// next picks the fault for a call to op on the queue queue names (the name
// in its QueueUrl, "" for none; worked out only for a rule that asks):
// the first rule that fires.
func (s *faultState) next(op string, queue func() string) FaultRule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pick(op, false, queue)
}

// entryFails reports whether a FaultEntryFailed rule fails the next entry
// of a batch call to op.
func (s *faultState) entryFails(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pick(op, true, func() string { return "" }).Kind == FaultEntryFailed
}

// pick is next's choice among the whole-call rules (entries false) or the
// per-entry ones; s.mu is held.
func (s *faultState) pick(op string, entries bool, queue func() string) FaultRule {
	name, named := "", false
	for i, r := range s.rules {
		if r.Operation != "" && r.Operation != op || (r.Kind == FaultEntryFailed) != entries {
			continue
		}
		if r.Queue != "" {
			if !named {
				name, named = queue(), true
			}
			if r.Queue != name {
				continue
			}
		}
		fire := false
		if r.Next > 0 {
			r.Next--
			fire = true
			if r.Next == 0 {
				s.rules = append(s.rules[:i], s.rules[i+1:]...)
			}
		} else if r.Fraction > 0 {
			fire = s.rng.Float64() < r.Fraction
		}
		if fire {
			out := *r
			if out.Kind == FaultSlow && out.Delay <= 0 {
				out.Delay = 2 * time.Second
			}
			return out
		}
	}
	return FaultRule{}
}

// InjectFault adds a rule; rules are tried in the order added.
func (f *Fake) InjectFault(r FaultRule) {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	if r.Kind == FaultNone || (r.Next <= 0 && r.Fraction <= 0) {
		return
	}
	f.faults.rules = append(f.faults.rules, &r)
}

// FailNext makes the next n calls (any operation) fail with kind.
func (f *Fake) FailNext(kind Fault, n int) { f.InjectFault(FaultRule{Kind: kind, Next: n}) }

// FailFraction makes each call fail with kind with probability fraction,
// drawn from Options.FaultSeed's generator.
func (f *Fake) FailFraction(kind Fault, fraction float64) {
	f.InjectFault(FaultRule{Kind: kind, Fraction: fraction})
}

// ClearFaults removes every rule.
func (f *Fake) ClearFaults() {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	f.faults.rules = nil
}

// RewriteAnswers passes each successful answer to op ("ReceiveMessage"; ""
// for every operation) through rewrite before it is sent: a test's way to
// make the fake answer what SQS itself would not (invalid text, a member
// left out, a wrong MD5OfBody). A nil rewrite removes the operation's hook.
func (f *Fake) RewriteAnswers(op string, rewrite func(answer []byte) []byte) {
	f.rewrites.Set(op, rewrite)
}

// rewrite applies the hooks RewriteAnswers set for op: its own, then the
// one for every operation.
func (f *Fake) rewrite(op string, answer []byte) []byte { return f.rewrites.Apply(op, answer) }
