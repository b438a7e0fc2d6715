package workers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

// lit is a plan literal.
func lit(s string) ir.Value { return ir.Value{Literal: json.RawMessage(s)} }

// bigProgram is a Worker's program whose literals and defaults lie beyond 2^53.
func bigProgram() *ir.Program {
	return &ir.Program{
		Version: ir.Version,
		Config: []ir.ConfigField{
			{Name: "big", Binding: "BIG", Type: ir.Type{Kind: ir.Int}, Default: json.RawMessage("9007199254740993")},
			{Name: "ratio", Binding: "RATIO", Type: ir.Type{Kind: ir.Decimal}, Default: json.RawMessage("0.10000000000000000001")},
			{Name: "flag", Binding: "FLAG", Type: ir.Type{Kind: ir.Bool}, Default: json.RawMessage("true")},
			{Name: "name", Binding: "NAME", Type: ir.Type{Kind: ir.Text}, Default: json.RawMessage(`"a \"b\" \u2028"`)},
		},
		Connections: []ir.Connection{{Name: "q", Package: "CloudflareQueues.v4", Settings: map[string]ir.Value{
			"queue_name": lit(`"returns"`), "max_batch_size": lit("10"), "max_retries": lit("3"),
			"d1_database_name": lit(`"events"`), "d1_database_id": lit(`"id"`),
			"account": lit("123456789012345678901"),
		}}},
		Queues: []ir.Queue{{Name: "returns_queue", Connection: "q"}},
	}
}

// The plan went into worker.mjs as a JavaScript object, whose numbers beyond
// 2^53 lose digits when the Worker loads; it goes in as its JSON text, which
// the library reads exactly (readPlan, test/plan.test.mjs).
func TestWorkerHoldsThePlanAsItsText(t *testing.T) {
	p := bigProgram()
	plan, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	plan = append(plan, '\n')
	files, err := Files(p, plan, "-- schema\n")
	if err != nil {
		t.Fatal(err)
	}
	w := string(files[Dir+"/worker.mjs"])
	_, rest, ok := strings.Cut(w, "\nconst PLAN = ")
	if !ok {
		t.Fatal("worker.mjs has no `const PLAN = ` line")
	}
	lit, tail, ok := strings.Cut(rest, ";\n\nexport default jadpoWorker(PLAN);\n")
	if !ok || tail != "" {
		t.Fatalf("worker.mjs does not end with the plan and its handlers: %q", rest[max(0, len(rest)-80):])
	}
	var text string
	if err := json.Unmarshal([]byte(lit), &text); err != nil {
		t.Fatalf("the plan is not written as a string literal: %v", err)
	}
	if text != string(plan[:len(plan)-1]) {
		t.Fatal("the plan's text in worker.mjs is not build/plan.json's")
	}
	if !strings.Contains(text, "123456789012345678901") || !strings.Contains(text, "9007199254740993") {
		t.Fatal("the plan's literals lost their digits")
	}
	if strings.ContainsAny(lit, "\n\u2028\u2029") {
		t.Fatal("the plan's string literal holds a line break")
	}
}

// wrangler hands a [vars] value written as a TOML number or boolean to the
// Worker as a JSON value: 9007199254740993 arrived as ...992, and the
// boolean true read as false (configValue compares text). Every default is
// written as a TOML string, as `--var` gives it.
func TestWranglerVarsAreText(t *testing.T) {
	cfg, err := wrangler(bigProgram())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"BIG = \"9007199254740993\"\n",
		"RATIO = \"0.10000000000000000001\"\n",
		"FLAG = \"true\"\n",
		"NAME = \"a \\\"b\\\" \\u2028\"\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("wrangler.toml lacks %q:\n%s", want, cfg)
		}
	}
}
