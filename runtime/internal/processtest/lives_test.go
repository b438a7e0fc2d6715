package processtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/internal/workload"
)

// lives runs `jadpo run` child processes one after another, as the crash
// tests do: each killed with SIGKILL at a moment the test picks, then a last
// one drained and stopped with SIGTERM; it adds up their JSON log lines.
type lives struct {
	t      *testing.T
	logs   string                 // the folder of the runs' logs
	start  func(log string) *Proc // starts one run logging to log
	kills  int
	worked int            // killed runs that kept, repeated or parked something
	totals map[string]int // log lines of every run, by msg
}

func newLives(t *testing.T, start func(log string) *Proc) *lives {
	return &lives{t: t, logs: t.TempDir(), start: start, totals: map[string]int{}}
}

// kill starts a run, lets it live until until returns (which gets the run
// and says how long it lived), kills it, and returns its log lines by msg.
func (l *lives) kill(until func(p *Proc) time.Duration) (msgs map[string]int, life time.Duration) {
	l.t.Helper()
	log := filepath.Join(l.logs, fmt.Sprintf("life-%03d.log", l.kills))
	p := l.start(log)
	life = until(p)
	if p.Exited() {
		b, _ := os.ReadFile(log)
		l.t.Fatalf("jadpo run ended by itself (%v):\n%s", p.Err(), b)
	}
	p.Kill()
	l.kills++
	msgs = l.count(log, fmt.Sprintf("life %d", l.kills))
	if msgs["kept"]+msgs["repeat: already kept"]+msgs["parked"] > 0 {
		l.worked++
	}
	return msgs, life
}

// last starts the last run, waits until it is running and drained says the
// work is done, stops it with SIGTERM (it must exit 0) and returns its log
// lines by msg.
func (l *lives) last(what string, drained func() bool) map[string]int {
	l.t.Helper()
	log := filepath.Join(l.logs, "final.log")
	p := l.start(log)
	workload.WaitUntil(l.t, 2*time.Minute, what, func() bool {
		if p.Exited() {
			b, _ := os.ReadFile(log)
			l.t.Fatalf("the last jadpo run ended by itself (%v):\n%s", p.Err(), b)
		}
		// Running, so that SIGTERM finds its handler installed.
		return p.Logged("running") && drained()
	})
	if err := p.Stop(30 * time.Second); err != nil {
		b, _ := os.ReadFile(log)
		l.t.Fatalf("jadpo run did not exit 0 on SIGTERM: %v\n%s", err, b)
	}
	return l.count(log, "the last run")
}

// count adds a run's log lines to the totals; a line that is not a JSON log
// line (a panic, a start-up error) fails the test.
func (l *lives) count(log, who string) map[string]int {
	l.t.Helper()
	msgs, other := logLines(l.t, log)
	for k, v := range msgs {
		l.totals[k] += v
	}
	if len(other) > 0 {
		l.t.Errorf("%s wrote lines that are not JSON log lines:\n%s", who, strings.Join(other, "\n"))
	}
	return msgs
}

// sleepFor is a kill moment: a fixed life.
func sleepFor(d time.Duration) func(*Proc) time.Duration {
	return func(*Proc) time.Duration { time.Sleep(d); return d }
}

// killWhen is a kill moment: as soon as cond holds (at most 10 s).
func killWhen(cond func() bool) func(*Proc) time.Duration {
	return func(*Proc) time.Duration {
		began := time.Now()
		for !cond() && time.Since(began) < 10*time.Second {
			time.Sleep(500 * time.Microsecond)
		}
		return time.Since(began)
	}
}

// untilLogged is a kill moment: as soon as the run logs msg (at most 20 s),
// such as "kept": its batch's keep has committed, its acknowledgement not
// yet sent.
func untilLogged(msg string) func(p *Proc) time.Duration {
	return func(p *Proc) time.Duration {
		began := time.Now()
		for !p.Logged(msg) && !p.Exited() && time.Since(began) < 20*time.Second {
			time.Sleep(500 * time.Microsecond)
		}
		return time.Since(began)
	}
}

// killWhileSending kills runs at random moments drawn from rng, each by
// live (which logs it), until at least minKills runs are killed and flow
// has sent all it sends (total); more than 10×minKills kills fail the test.
// A moment is 50 ms (building the plan, migrating) to 1.5 s (receiving)
// after the run's start.
func (l *lives) killWhileSending(rng *rand.Rand, minKills int, flow *workload.Flow, total int, live func(what string, until func(*Proc) time.Duration)) {
	l.t.Helper()
	for l.kills < minKills || !flow.Finished() {
		if l.kills >= 10*minKills {
			l.t.Fatalf("%d kills and the messages are still not all sent (%d of %d)", l.kills, flow.Sent(), total)
		}
		live("at random", sleepFor(time.Duration(50+rng.IntN(1450))*time.Millisecond))
	}
}
