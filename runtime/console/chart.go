package console

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// A chart is one queue's activity over a window, drawn server-side as SVG: one bar a
// bucket, kept stacked under parked.
type chart struct {
	Title  string
	Label  string // the whole chart in words, for a screen reader
	W, H   int
	Bars   []bar
	Ticks  []tick
	Kept   int64
	Parked int64
}

type bar struct {
	X, W             int
	KeptY, KeptH     int
	ParkedY, ParkedH int
	Title            string
}

type tick struct {
	X    int
	Text string
}

// window is a chart's span: n buckets of step, the last one holding now.
type window struct {
	name string
	step time.Duration
	n    int
}

var windows = []window{{"last hour", 5 * time.Minute, 12}, {"last day", time.Hour, 24}}

// since is the start of w's first bucket, for now.
func (w window) since(now time.Time) time.Time {
	return now.UTC().Truncate(w.step).Add(-time.Duration(w.n-1) * w.step)
}

const (
	chartW, chartH = 360, 96
	chartTop       = 4
	chartBottom    = 16 // room for the tick labels
)

// drawChart draws one source's counts (bucket -> counts) of window w starting at since.
func drawChart(source string, w window, since time.Time, counts map[int]store.ActivityCount) chart {
	c := chart{Title: w.name, W: chartW, H: chartH}
	var top int64 = 1
	for _, n := range counts {
		top = max(top, n.Received+n.Parked)
		c.Kept += n.Received
		c.Parked += n.Parked
	}
	plot := chartH - chartTop - chartBottom
	slot := chartW / w.n
	format := "15:04"
	for i := range w.n {
		n := counts[i]
		from := since.Add(time.Duration(i) * w.step)
		kh := int(n.Received * int64(plot) / top)
		ph := int(n.Parked * int64(plot) / top)
		if n.Received > 0 && kh == 0 {
			kh = 1
		}
		if n.Parked > 0 && ph == 0 {
			ph = 1
		}
		base := chartH - chartBottom
		c.Bars = append(c.Bars, bar{
			X: i*slot + 1, W: slot - 2,
			KeptY: base - kh, KeptH: kh,
			ParkedY: base - kh - ph, ParkedH: ph,
			Title: fmt.Sprintf("%s–%s UTC: %d kept, %d parked", from.Format(format), from.Add(w.step).Format(format), n.Received, n.Parked),
		})
		if i%(w.n/4) == 0 {
			c.Ticks = append(c.Ticks, tick{X: i*slot + 1, Text: from.Format(format)})
		}
	}
	c.Label = fmt.Sprintf("%s, %s: %d kept, %d parked", source, w.name, c.Kept, c.Parked)
	return c
}

// queueActivity is one source's row of the overview.
type queueActivity struct {
	Source string
	Charts []chart
}

// activity groups the counts of each window by source, sources in name order.
func activity(byWindow [][]store.ActivityCount, now time.Time) []queueActivity {
	per := map[string][]map[int]store.ActivityCount{}
	for wi, counts := range byWindow {
		for _, c := range counts {
			if c.Bucket < 0 || c.Bucket >= windows[wi].n {
				continue
			}
			m := per[c.Source]
			if m == nil {
				m = make([]map[int]store.ActivityCount, len(windows))
				for i := range m {
					m[i] = map[int]store.ActivityCount{}
				}
				per[c.Source] = m
			}
			m[wi][c.Bucket] = c
		}
	}
	var out []queueActivity
	for _, src := range slices.Sorted(maps.Keys(per)) {
		q := queueActivity{Source: src}
		for wi, w := range windows {
			q.Charts = append(q.Charts, drawChart(src, w, w.since(now), per[src][wi]))
		}
		out = append(out, q)
	}
	return out
}
