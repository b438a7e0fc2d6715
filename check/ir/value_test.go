package ir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
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
	b, err := os.ReadFile(filepath.Join(reporoot.Dir(t), "testdata", "config", "table.json"))
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

// FuzzValueProblem: for any value of any of the table's types, ValueProblem
// does not panic, and its sentence never holds the value (it may be a
// secret): a problem that contains the value must owe it to the sentence's
// own words, which the problems of the table's values for that type hold.
func FuzzValueProblem(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(reporoot.Dir(f), "testdata", "config", "table.json"))
	if err != nil {
		f.Fatal(err)
	}
	var tab configTable
	if err := json.Unmarshal(b, &tab); err != nil {
		f.Fatal(err)
	}
	var types []Type
	words := map[Kind]string{} // the sentences the table's types of a kind give, side by side
	for _, c := range tab.Cases {
		i := slices.IndexFunc(types, func(t Type) bool { return reflect.DeepEqual(t, c.Type) })
		if i < 0 {
			i = len(types)
			types = append(types, c.Type)
		}
		words[c.Type.Kind] += "\n" + c.Problem
		f.Add(uint8(i), c.Value)
	}
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		i := int(which) % len(types)
		p := ValueProblem(types[i], v)
		if p != "" && len(v) >= 3 && strings.Contains(p, v) && !strings.Contains(words[types[i].Kind], v) {
			t.Fatalf("%+v %q: the problem %q holds the value", types[i], v, p)
		}
	})
}
