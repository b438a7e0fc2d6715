package cfqueuesfake

import "fmt"

// faultRule fails the next `left` authenticated requests of op ("" for
// every op) with status.
type faultRule struct {
	op     string
	left   int
	status int // 0: hang (HangNext)
}

// FailNext makes the next n authenticated requests of op ("pull", "ack",
// "push"; "" for any) answer status without doing anything: 429 with code
// 971 (Cloudflare's rate limit), 5xx with code 10013, another 4xx with code
// 10001. Rules are tried in the order added. An op or status outside those
// is a mistake in the test and panics.
func (f *Fake) FailNext(op string, n int, status int) {
	switch op {
	case "", opPull, opAck, opPush:
	default:
		panic(fmt.Sprintf("cfqueuesfake: FailNext: unknown op %q (want pull, ack, push or \"\")", op))
	}
	if status < 400 || status > 599 {
		panic(fmt.Sprintf("cfqueuesfake: FailNext: status %d is not an HTTP error", status))
	}
	if n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &faultRule{op: op, left: n, status: status})
}

// HangNext makes the next n authenticated requests of op ("pull", "ack",
// "push"; "" for any) never answer: each is held, doing nothing, until the
// client gives up. Rules are tried with FailNext's, in the order added.
func (f *Fake) HangNext(op string, n int) {
	switch op {
	case "", opPull, opAck, opPush:
	default:
		panic(fmt.Sprintf("cfqueuesfake: HangNext: unknown op %q (want pull, ack, push or \"\")", op))
	}
	if n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &faultRule{op: op, left: n})
}

// errHang is nextFault's answer for a request to hold unanswered.
var errHang = &apiError{}

// ClearFaults removes every rule FailNext and HangNext added.
func (f *Fake) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// nextFault uses up the first rule matching op and returns its refusal
// (errHang to hold the request), or nil when no rule matches.
func (f *Fake) nextFault(op string) *apiError {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.faults {
		if r.op != "" && r.op != op {
			continue
		}
		r.left--
		if r.left == 0 {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
		}
		switch {
		case r.status == 0:
			return errHang
		case r.status == 429:
			return &apiError{status: 429, code: CodeThrottled, message: "Please wait and consider throttling your request speed"}
		case r.status >= 500:
			return &apiError{status: r.status, code: CodeInternal, message: "internal error"}
		default:
			return &apiError{status: r.status, code: CodeInvalidRequest, message: "injected fault"}
		}
	}
	return nil
}

// RewriteAnswers passes each successful answer to op ("pull", "ack",
// "push"; "" for any) through rewrite before it is sent: a test's way to
// make the fake answer what Cloudflare itself would not (invalid text, a
// member left out). A nil rewrite removes the operation's hook. An op
// outside those is a mistake in the test and panics.
func (f *Fake) RewriteAnswers(op string, rewrite func(answer []byte) []byte) {
	switch op {
	case "", opPull, opAck, opPush:
	default:
		panic(fmt.Sprintf("cfqueuesfake: RewriteAnswers: unknown op %q (want pull, ack, push or \"\")", op))
	}
	f.rewrites.Set(op, rewrite)
}

// rewrite applies the hooks RewriteAnswers set for op: its own, then the
// one for every op.
func (f *Fake) rewrite(op string, answer []byte) []byte { return f.rewrites.Apply(op, answer) }
