package ir

import (
	"encoding/json"
	"os"
	"testing"
)

// configTable is testdata/config/table.json, which the Worker's Node tests
// (codegen/workers/test/config.test.mjs) run too: one outcome for each
// value in both runtimes.
type configTable struct {
	Cases []struct {
		Type    Type   `json:"type"`
		Value   string `json:"value"`
		Problem string `json:"problem"`
	} `json:"cases"`
}

func TestValueProblemTable(t *testing.T) {
	b, err := os.ReadFile("../../testdata/config/table.json")
	if err != nil {
		t.Fatal(err)
	}
	var tab configTable
	if err := json.Unmarshal(b, &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Cases) < 50 {
		t.Fatalf("the table holds %d cases", len(tab.Cases))
	}
	for _, c := range tab.Cases {
		if got := ValueProblem(c.Type, c.Value); got != c.Problem {
			t.Errorf("%s %+v %q: problem %q, want %q", c.Type.Kind, c.Type.Rules, c.Value, got, c.Problem)
		}
	}
}

func TestValidEmailRefusesWhatATerminalActsOn(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		s := "ann" + string(r) + "@example.com"
		if EmailRefuses(r) && ValidEmail(s) {
			t.Errorf("%U accepted", r)
		}
	}
	if ValidEmail("\u202emoc.live@ann") || !ValidEmail("ann@example.com") || ValidEmail("ann@exa\xffmple.com") {
		t.Fatal("ValidEmail")
	}
}
