package runtimetest

import "net/http"

// AnswerWith makes the target answer every call with f's status and body
// (nil: the script again). The call is recorded before f runs, so f may
// block, for instance to hold a handler past its lease; f runs on the
// server's goroutine for the request and may be called concurrently.
func (tg *Target) AnswerWith(f func(r *http.Request) (status int, body string)) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.answer = f
}
