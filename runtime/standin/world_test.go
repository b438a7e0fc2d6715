package standin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/sqsfake"
)

// repoRoot is the repository's root, from this package's folder.
const repoRoot = "../.."

// Issue 12 point 1: a connection of a kind dev has no stand-in for refuses
// the start, naming the connection and the fix; a package's fixed host (no
// host: in the app) is pointed at the stand-in like a written one.
func TestDevRefusesAConnectionWithoutAStandIn(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(repoRoot, "examples", "warehouse")))
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
	w := &World{Plan: p, SQS: fake, sinkURL: "http://127.0.0.1:1", queueURLs: map[string]string{}, cfQueues: map[string][2]string{}}
	if err := w.wire(); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Connections {
		if c.Name == "returns_queue" && (c.Host == nil || string(c.Host.Literal) != `"`+fake.URL+`"`) {
			t.Fatalf("the fixed host was not pointed at the fake: %+v", c.Host)
		}
	}
	res = check.Check(project.Load(filepath.Join(repoRoot, "examples", "warehouse")))
	p = res.Program
	for i := range p.Connections {
		if c := &p.Connections[i]; c.Name == "returns_queue" {
			c.Provider.AWSTarget = "AmazonSNS"
		}
	}
	w = &World{Plan: p, SQS: fake, sinkURL: "http://127.0.0.1:1", queueURLs: map[string]string{}, cfQueues: map[string][2]string{}}
	err = w.wire()
	if err == nil || !strings.Contains(err.Error(), "connection returns_queue (package AmazonSqs.v2012_11_05) speaks aws_json (AmazonSNS), which has no local stand-in") ||
		!strings.Contains(err.Error(), "leave the connection out while developing") {
		t.Fatalf("wire = %v", err)
	}
}
