//go:build unix

package compare

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time the process has used so far, user and system, on
// every thread (the garbage collector's background work included).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
