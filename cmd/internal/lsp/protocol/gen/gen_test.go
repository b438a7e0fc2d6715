package gen

import (
	"strings"
	"testing"
)

// A small metaModel with each kind of field the rules tell apart.
const smallModel = `{"metaData":{"version":"3.17.0"},
"structures":[
 {"name":"Base","properties":[{"name":"uri","type":{"kind":"base","name":"DocumentUri"}}]},
 {"name":"Thing","extends":[{"kind":"reference","name":"Base"}],"properties":[
  {"name":"zeta","type":{"kind":"base","name":"integer"},"optional":true},
  {"name":"alpha","type":{"kind":"base","name":"string"}},
  {"name":"version","type":{"kind":"or","items":[{"kind":"base","name":"integer"},{"kind":"base","name":"null"}]}},
  {"name":"child","type":{"kind":"reference","name":"Base"},"optional":true},
  {"name":"list","type":{"kind":"array","element":{"kind":"reference","name":"Base"}},"optional":true},
  {"name":"kind","type":{"kind":"reference","name":"Kind"},"optional":true},
  {"name":"either","type":{"kind":"or","items":[{"kind":"base","name":"string"},{"kind":"reference","name":"Base"}]}},
  {"name":"resultId","type":{"kind":"base","name":"string"},"optional":true}
 ]}],
"enumerations":[{"name":"Kind","type":{"kind":"base","name":"uinteger"},"values":[{"name":"One","value":1},{"name":"Two","value":2}]}],
"typeAliases":[]}`

func TestRules(t *testing.T) {
	types := []Type{
		{Name: "Base", Fields: []string{"uri"}},
		{Name: "Thing", Fields: []string{"zeta", "alpha", "version", "child", "list", "kind", "either", "resultId", "uri"},
			Over: map[string]Field{"either": {Type: "string"}, "list": {Always: true}}},
	}
	out, err := generate([]byte(smallModel), types, []string{"Kind"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(out)
	for _, want := range []string{
		"Alpha string `json:\"alpha\"`",          // required: always written
		"Zeta int `json:\"zeta,omitempty\"`",     // optional
		"Version *int `json:\"version\"`",        // X or null, required: null
		"Child *Base `json:\"child,omitempty\"`", // an optional structure: a pointer
		"List []Base `json:\"list\"`",            // Always: no omitempty
		"Kind Kind `json:\"kind,omitempty\"`",    // an enumeration by name
		"Either string `json:\"either\"`",        // a union: the table's side
		"ResultID string `json:\"resultId,omitempty\"`",
		"URI string `json:\"uri\"`", // from what it extends
		"KindTwo Kind = 2",
	} {
		if !strings.Contains(strings.Join(strings.Fields(src), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("no %s in\n%s", want, src)
		}
	}
	// Fields in the order of their JSON names, as a map is written.
	order := []string{`"alpha"`, `"child`, `"either"`, `"kind`, `"list"`, `"resultId`, `"uri"`, `"version"`, `"zeta`}
	at := 0
	for _, o := range order {
		i := strings.Index(src[at:], "json:"+o)
		if i < 0 {
			t.Fatalf("%s not after the fields before it in\n%s", o, src)
		}
		at += i
	}
}

func TestStopsWhereTheTableMustSay(t *testing.T) {
	cases := map[string][]Type{
		"a union":          {{Name: "Base", Fields: []string{"uri"}}, {Name: "Thing", Fields: []string{"either"}}},
		"an unknown field": {{Name: "Thing", Fields: []string{"nope"}}},
		"a type not made":  {{Name: "Thing", Fields: []string{"child"}}},
		"an enum not made": {{Name: "Thing", Fields: []string{"kind"}}},
		"no such type":     {{Name: "Nope"}},
		"a field twice":    {{Name: "Thing", Fields: []string{"alpha", "alpha"}}},
	}
	for name, types := range cases {
		if _, err := generate([]byte(smallModel), types, nil); err == nil {
			t.Errorf("%s: generated without an error", name)
		}
	}
}
