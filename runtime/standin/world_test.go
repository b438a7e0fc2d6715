package standin

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
)

// Issue 12 point 1: a connection of a kind dev has no stand-in for refuses
// the start, naming the connection and the fix; a package's fixed host (no
// host: in the app) is pointed at the stand-in like a written one.
func TestDevRefusesAConnectionWithoutAStandIn(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	if res.Diags.HasErrors() {
		t.Fatal("examples/warehouse does not check")
	}
	fake, err := sqsfake.Start("", sqsfake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	p := res.Program
	for i := range p.Connections {
		if c := &p.Connections[i]; c.Name == "returns_queue" {
			c.Host, c.Provider.Host = nil, "https://sqs.us-east-1.amazonaws.com"
		}
	}
	w := &World{Plan: p, SQS: fake, ServicesURL: "http://127.0.0.1:1", queueURLs: map[string]string{}}
	if err := w.wire(Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Connections {
		if c.Name == "returns_queue" && (c.Host == nil || string(c.Host.Literal) != `"`+fake.URL+`"`) {
			t.Fatalf("the fixed host was not pointed at the fake: %+v", c.Host)
		}
	}
	res = check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	p = res.Program
	for i := range p.Connections {
		if c := &p.Connections[i]; c.Name == "returns_queue" {
			c.Provider.AWSTarget = "AmazonSNS"
		}
	}
	w = &World{Plan: p, SQS: fake, ServicesURL: "http://127.0.0.1:1", queueURLs: map[string]string{}}
	err = w.wire(Options{})
	if err == nil || !strings.Contains(err.Error(), "connection returns_queue (package AmazonSqs.v2012_11_05) speaks aws_json (AmazonSNS), which has no local stand-in") ||
		!strings.Contains(err.Error(), "leave the connection out while developing") {
		t.Fatalf("wire = %v", err)
	}
}

// Start points a copy of the plan at the stand-ins, leaving the caller's
// plan as it was; Send reaches the app's queue on the SQS fake, and a queue
// that is not the app's is ErrNoQueue.
func TestStartPointsACopyOfThePlan(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	if res.Diags.HasErrors() {
		t.Fatal("examples/warehouse does not check")
	}
	p := res.Program
	for i := range p.Connections {
		if c := &p.Connections[i]; c.Name == "returns_queue" {
			c.Host, c.Provider.Host = nil, "https://sqs.us-east-1.amazonaws.com"
		}
	}
	w, err := Start(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, c := range w.Plan.Connections {
		if c.Name != "returns_queue" {
			continue
		}
		if c.Host == nil || string(c.Host.Literal) != `"`+w.SQS.URL+`"` {
			t.Fatalf("the fixed host was not pointed at the fake: %+v", c.Host)
		}
		if p.Connections[i].Host != nil {
			t.Fatalf("the caller's plan was changed: %+v", p.Connections[i].Host)
		}
	}
	if got := strings.Join(w.Queues(), " "); got != "returns_queue warehouse_queue" {
		t.Fatalf("Queues() = %s", got)
	}
	if _, err := w.Send(context.Background(), "warehouse_queue", `{"id":"m-1"}`); err != nil {
		t.Fatal(err)
	}
	if s, ok := w.SQS.Stats("warehouse_queue"); !ok || s.Visible != 1 {
		t.Fatalf("the fake's queue after Send: %+v %v", s, ok)
	}
	if _, err := w.Send(context.Background(), "nowhere", "{}"); !errors.Is(err, ErrNoQueue) {
		t.Fatalf("Send to no queue: %v", err)
	}
}

// What a test's world asks of Start (runtime/runtimetest): the app's
// environment made from Options.Environ alone, the SQS credential it
// accepts, its queues' attributes with a dead-letter queue's ARN filled in,
// and the app's services answered by Options.Services.
func TestStartTakesTheWorldATestAsksFor(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	if res.Diags.HasErrors() {
		t.Fatal("examples/warehouse does not check")
	}
	services := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusTeapot) })
	w, err := Start(context.Background(), res.Program, Options{
		Environ:          []string{"PACKING_TOKEN=tok"},
		SQS:              sqsfake.Options{Credentials: map[string]string{"KEY-B": "b", "KEY-A": "a"}},
		QueueAttributes:  map[string]map[string]string{"warehouse_queue": {"RedrivePolicy": `{"deadLetterTargetArn":"{arn:dead}","maxReceiveCount":"2"}`}},
		DeadLetterQueues: []string{"dead"},
		Services:         services,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	env := map[string]string{}
	for _, kv := range w.Environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["PACKING_TOKEN"] != "tok" || env["AWS_ACCESS_KEY_ID"] != "KEY-A" || env["AWS_SECRET_ACCESS_KEY"] != "a" ||
		env["PACKING_HOST"] != w.ServicesURL || env["SQS_HOST"] != w.SQS.URL || len(env) != 7 {
		t.Fatalf("Environ = %v", w.Environ)
	}
	redrive := map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + w.SQS.QueueArn("dead") + `","maxReceiveCount":"2"}`}
	if _, err := w.SQS.CreateQueue("warehouse_queue", redrive); err != nil {
		t.Fatalf("the queue was not created with its attributes: %v", err)
	}
	resp, err := http.Post(w.ServicesURL+"/jobs", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("the services answered %d, not Options.Services' 418", resp.StatusCode)
	}
}
