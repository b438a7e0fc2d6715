// Package rewrites holds a fake's answer rewriting hooks (the SQS fake's and
// the Cloudflare Queues fake's RewriteAnswers): a test's way to make a fake
// answer what the real service would not (invalid text, a member left out).
package rewrites

import "sync"

// Hooks are the rewrites by operation; "" is every operation's. The zero
// value has none and is ready; it is safe for concurrent use.
type Hooks struct {
	mu   sync.Mutex
	byOp map[string]func(answer []byte) []byte
}

// Set makes rewrite op's hook; a nil rewrite removes it.
func (h *Hooks) Set(op string, rewrite func(answer []byte) []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if rewrite == nil {
		delete(h.byOp, op)
		return
	}
	if h.byOp == nil {
		h.byOp = map[string]func([]byte) []byte{}
	}
	h.byOp[op] = rewrite
}

// Apply passes a successful answer to op through op's own hook, then through
// every operation's.
func (h *Hooks) Apply(op string, answer []byte) []byte {
	h.mu.Lock()
	own, all := h.byOp[op], h.byOp[""]
	h.mu.Unlock()
	if own != nil {
		answer = own(answer)
	}
	if all != nil {
		answer = all(answer)
	}
	return answer
}
