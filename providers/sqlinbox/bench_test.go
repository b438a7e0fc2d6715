package sqlinbox

import (
	"testing"
)

// BenchmarkClaimFinish: claim 10, finish all 10, on the seed's table topped up outside the timer.
func BenchmarkClaimFinish(b *testing.B) {
	for _, form := range []Form{RowLock, Lease, AdvisoryLock} {
		b.Run(string(form), func(b *testing.B) {
			pool, _ := testDB(b)
			seed(b, pool, 0)
			in := open(b, pool, seedTable(form))
			left := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if left < 10 {
					b.StopTimer()
					addJobs(b, pool, 2000)
					left += 2000
					b.StartTimer()
				}
				batch := claim(b, in, 10)
				n, err := batch.Finish(bg, ids(batch))
				if err != nil || n != 10 {
					b.Fatalf("Finish = %d, %v", n, err)
				}
				left -= 10
			}
		})
	}
}
