package runtime

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/runtime/store"
)

// Metrics are the runtime's Prometheus metrics: received, kept, repeats,
// parked by reason (and, apart, those over their broker's delivery
// limit), deliveries by outcome, tick duration.
type Metrics struct {
	Registry      *prometheus.Registry
	received      *prometheus.CounterVec
	kept          *prometheus.CounterVec
	repeats       *prometheus.CounterVec
	parkedBy      *prometheus.CounterVec
	parkedLimit   *prometheus.CounterVec
	unavailable   *prometheus.CounterVec
	recvErrors    *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	released      *prometheus.CounterVec
	ackCalls      *prometheus.CounterVec
	ackFailed     *prometheus.CounterVec
	ackUnanswered *prometheus.CounterVec
	tickSeconds   prometheus.Histogram
	housekeptBy   *prometheus.CounterVec
	// The store's figures, refreshed from Store.Stats at most once a tick
	// (Options.StatsEvery), never by a scrape.
	storeDeliveries *prometheus.GaugeVec
	storeParked     *prometheus.GaugeVec
	storeRows       *prometheus.GaugeVec
	storeBytes      *prometheus.GaugeVec
	oldestPending   prometheus.Gauge
}

// NewMetrics registers the metrics in reg (a new registry when nil).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		Registry: reg,
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_received_total", Help: "Messages received from queues."}, []string{"queue"}),
		kept:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_kept_total", Help: "Messages kept in the events' store."}, []string{"queue"}),
		repeats:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_repeated_total", Help: "Messages whose id was already kept."}, []string{"queue"}),
		parkedBy: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_parked_total", Help: "Messages parked, by reason."}, []string{"queue", "reason"}),
		// A counter of its own, not a label of jadpo_messages_parked_total:
		// a label added there would make each existing series a new one.
		parkedLimit: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_parked_delivery_limit_total",
			Help: "Messages parked because their broker's delivery count passed the connection's limit (also in jadpo_messages_parked_total, reason unreadable)."}, []string{"queue"}),
		unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_messages_left_on_queue_total",
			Help: "Messages left on their queue because the store could not take them."}, []string{"queue"}),
		recvErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_receive_errors_total", Help: "Failed receive calls."}, []string{"queue"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_deliveries_total", Help: "Delivery attempts settled, by outcome."}, []string{"subscriber", "outcome"}),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_deliveries_released_total",
			Help: "Deliveries claimed ahead of a free worker and handed back unrun."}, []string{"subscriber"}),
		ackCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_acknowledge_requests_total",
			Help: "Acknowledge requests sent to queues: form batch acknowledges many messages in one request, single one."}, []string{"queue", "form"}),
		ackFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_acknowledge_failed_entries_total",
			Help: "Entries a batch acknowledgement's answer listed as failed (each is then acknowledged on its own)."}, []string{"queue"}),
		ackUnanswered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_acknowledge_unanswered_entries_total",
			Help: "Entries a batch acknowledgement's answer named neither as taken nor as failed (each is then acknowledged on its own)."}, []string{"queue"}),
		tickSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "jadpo_tick_duration_seconds", Help: "How long a tick takes.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}),
		housekeptBy: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jadpo_store_housekept_rows_total",
			Help: "Rows housekeeping deleted, by table."}, []string{"table"}),
		storeDeliveries: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jadpo_store_deliveries",
			Help: "Deliveries in the store by subscriber and state, as of the last stats refresh."}, []string{"subscriber", "state"}),
		storeParked: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jadpo_store_parked_messages",
			Help: "Parked messages in the store by reason and state, as of the last stats refresh."}, []string{"reason", "state"}),
		storeRows: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jadpo_store_table_rows",
			Help: "Rows of each store table, as of the last stats refresh."}, []string{"table"}),
		storeBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jadpo_store_table_bytes",
			Help: "Size of each store table with its indexes (PostgreSQL only), as of the last stats refresh."}, []string{"table"}),
		oldestPending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jadpo_store_oldest_pending_delivery_age_seconds",
			Help: "Age of the oldest delivery not yet settled (0 when none), as of the last stats refresh."}),
	}
	reg.MustRegister(m.received, m.kept, m.repeats, m.parkedBy, m.parkedLimit, m.unavailable, m.recvErrors, m.deliveries, m.released, m.ackCalls, m.ackFailed, m.ackUnanswered, m.tickSeconds,
		m.housekeptBy, m.storeDeliveries, m.storeParked, m.storeRows, m.storeBytes, m.oldestPending)
	return m
}

// queueMetrics are one queue's counters.
type queueMetrics struct {
	m                                                        *Metrics
	name                                                     string
	received, kept, repeats, storeUnavailable, receiveErrors prometheus.Counter
	// parkedDeliveryLimit counts the parks of messages over their broker's
	// delivery limit (queue.Message.OverDeliveryLimit), counted by reason too.
	parkedDeliveryLimit prometheus.Counter
	// acknowledge requests by form, and the batch entries that failed
	ackBatch, ackSingle, ackFailedEntries, ackUnanswered prometheus.Counter
}

func (m *Metrics) queue(name string) *queueMetrics {
	return &queueMetrics{m: m, name: name,
		received: m.received.WithLabelValues(name), kept: m.kept.WithLabelValues(name),
		repeats: m.repeats.WithLabelValues(name), storeUnavailable: m.unavailable.WithLabelValues(name),
		receiveErrors: m.recvErrors.WithLabelValues(name), parkedDeliveryLimit: m.parkedLimit.WithLabelValues(name),
		ackBatch: m.ackCalls.WithLabelValues(name, "batch"), ackSingle: m.ackCalls.WithLabelValues(name, "single"),
		ackFailedEntries: m.ackFailed.WithLabelValues(name), ackUnanswered: m.ackUnanswered.WithLabelValues(name)}
}

// acknowledged counts one batch's acknowledgement requests.
func (q *queueMetrics) acknowledged(a queue.Acks) {
	q.ackBatch.Add(float64(a.BatchCalls))
	q.ackSingle.Add(float64(a.SingleCalls))
	q.ackFailedEntries.Add(float64(a.FailedEntries))
	q.ackUnanswered.Add(float64(a.UnansweredEntries))
}

func (q *queueMetrics) parked(reason string) prometheus.Counter {
	return q.m.parkedBy.WithLabelValues(q.name, reason)
}

// housekept counts what one housekeeping call deleted.
func (m *Metrics) housekept(h store.Housekept) {
	for table, n := range map[string]int64{
		"jadpo_received_events": h.ReceivedIDs, "jadpo_parked_messages": h.ParkedMessages,
		"jadpo_deliveries": h.Deliveries, "jadpo_outbox": h.Outbox,
	} {
		if n > 0 {
			m.housekeptBy.WithLabelValues(table).Add(float64(n))
		}
	}
}

// storeStats sets the store's gauges from one Stats, at now.
func (m *Metrics) storeStats(s store.Stats, now time.Time) {
	m.storeDeliveries.Reset()
	for k, n := range s.BySubscriber {
		m.storeDeliveries.WithLabelValues(k.Subscriber, string(k.State)).Set(float64(n))
	}
	m.storeParked.Reset()
	for k, n := range s.Parked {
		m.storeParked.WithLabelValues(string(k.Reason), string(k.State)).Set(float64(n))
	}
	for _, t := range s.Tables {
		m.storeRows.WithLabelValues(t.Name).Set(float64(t.Rows))
		if t.Bytes >= 0 {
			m.storeBytes.WithLabelValues(t.Name).Set(float64(t.Bytes))
		}
	}
	age := 0.0
	if !s.OldestPending.IsZero() {
		age = now.Sub(s.OldestPending).Seconds()
	}
	m.oldestPending.Set(age)
}
