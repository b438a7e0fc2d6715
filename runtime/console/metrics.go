package console

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// runCounts are what the store does not keep but jadpo run counts on its metrics (repeats,
// and what housekeeping deleted), read from Options.MetricsURL for the overview.
type runCounts struct {
	URL    string
	Err    string
	Queues []runQueue
	// Housekept is rows deleted by table, in table order.
	Housekept []tableCount
}

type runQueue struct {
	Queue                           string
	Received, Kept, Repeats, Parked float64
	// OverLimit are the parked over their broker's delivery limit, of Parked.
	OverLimit float64
}

type tableCount struct {
	Table string
	Rows  float64
}

// metricsLimit bounds the metrics page read: jadpo run's is a few kilobytes.
const metricsLimit = 4 << 20

func (h *Handler) runCounts(ctx context.Context) *runCounts {
	if h.o.MetricsURL == "" {
		return nil
	}
	rc := &runCounts{URL: h.o.MetricsURL}
	if err := rc.read(ctx, h.o.MetricsURL); err != nil {
		rc.Err = err.Error()
	}
	return rc
}

func (rc *runCounts) read(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, metricsLimit))
	if err != nil {
		return fmt.Errorf("%s is not a Prometheus metrics page: %v", url, err)
	}
	queues := map[string]*runQueue{}
	q := func(name string) *runQueue {
		if queues[name] == nil {
			queues[name] = &runQueue{Queue: name}
		}
		return queues[name]
	}
	each := func(family, label string, add func(value string, n float64)) {
		f := fams[family]
		if f == nil {
			return
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && m.GetCounter() != nil {
					add(l.GetValue(), m.GetCounter().GetValue())
				}
			}
		}
	}
	each("jadpo_messages_received_total", "queue", func(v string, n float64) { q(v).Received += n })
	each("jadpo_messages_kept_total", "queue", func(v string, n float64) { q(v).Kept += n })
	each("jadpo_messages_repeated_total", "queue", func(v string, n float64) { q(v).Repeats += n })
	each("jadpo_messages_parked_total", "queue", func(v string, n float64) { q(v).Parked += n })
	each("jadpo_messages_parked_delivery_limit_total", "queue", func(v string, n float64) { q(v).OverLimit += n })
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		rc.Queues = append(rc.Queues, *queues[name])
	}
	each("jadpo_store_housekept_rows_total", "table", func(v string, n float64) {
		rc.Housekept = append(rc.Housekept, tableCount{Table: v, Rows: n})
	})
	slices.SortFunc(rc.Housekept, func(a, b tableCount) int {
		if a.Table < b.Table {
			return -1
		}
		if a.Table > b.Table {
			return 1
		}
		return 0
	})
	if len(fams) > 0 && fams["jadpo_messages_received_total"] == nil && fams["jadpo_store_housekept_rows_total"] == nil {
		return fmt.Errorf("%s holds no jadpo metrics (is it jadpo run's --metrics-addr?)", url)
	}
	return nil
}
