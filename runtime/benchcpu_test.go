package runtime

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchCPU measures where a benchmark's CPU goes, to say what bounds it on
// a machine whose cores the benchmark shares with PostgreSQL: the test
// process (the runtime or raw loop, and the fakes and targets it serves)
// from getrusage, and the PostgreSQL backends of the benchmark's
// connections (found by their application_name) from /proc. Both are
// reported per op; where /proc cannot be read, the PostgreSQL figure is
// left out.
type BenchCPU struct {
	app       string
	server    string
	procStart int64
	pgStart   map[int]int64
}

// NewBenchCPU names the benchmark's connections: use the URL it returns
// for every connection whose server CPU counts.
func NewBenchCPU(storeURL string) (*BenchCPU, string) {
	c := &BenchCPU{app: fmt.Sprintf("jadpo_bench_%d_%d", os.Getpid(), benchRun.Add(1)), server: storeURL}
	u, err := url.Parse(storeURL)
	if err != nil {
		return c, storeURL
	}
	q := u.Query()
	q.Set("application_name", c.app)
	u.RawQuery = q.Encode()
	return c, u.String()
}

// Start takes the first reading; call it where the timer starts. A nil
// BenchCPU measures nothing.
func (c *BenchCPU) Start(b *testing.B) {
	if c == nil {
		return
	}
	c.procStart = processCPU()
	c.pgStart = c.backendsCPU(b)
}

// Stop takes the second reading and reports both figures per op:
// go-cpu-ms/op and pg-cpu-ms/op (scale 1000 for µs per delivery).
func (c *BenchCPU) Stop(b *testing.B, unit string, scale float64) {
	if c == nil {
		return
	}
	proc := processCPU() - c.procStart
	b.ReportMetric(float64(proc)/1e6*scale/float64(b.N), "go-cpu-"+unit)
	now := c.backendsCPU(b)
	if now == nil {
		return
	}
	var pg int64
	for pid, t := range now {
		pg += t - c.pgStart[pid]
	}
	b.ReportMetric(float64(pg)/1e6*scale/float64(b.N), "pg-cpu-"+unit)
}

// processCPU is the process's user and system CPU so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// backendsCPU reads the user and system CPU of each backend serving the
// benchmark's connections, in nanoseconds, by process id; nil when /proc
// cannot be read.
func (c *BenchCPU) backendsCPU(b *testing.B) map[int]int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.server)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", c.app)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	out := map[int]int64{}
	for _, pid := range pids {
		t, ok := procCPU(int(pid))
		if !ok {
			return nil
		}
		out[int(pid)] = t
	}
	return out
}

// procCPU reads utime and stime (fields 14 and 15, in clock ticks of
// 1/100 s on Linux) of a process from /proc/PID/stat.
func procCPU(pid int) (int64, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count from its end.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (utime + stime) * 1e7, true
}
