package jsonout

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// docs/reference/json.md is held to the types here, both ways: a field of a
// type that the page does not name fails, and so does a row of one of its
// tables that no type has, or whose type column says otherwise.

// docPage is the reference page of the JSON documents, from the repository's root.
var docPage = filepath.Join("docs", "reference", "json.md")

// field is one JSON field of a struct: its name, its Go type and its JSON type
// as the page writes it ("string", "number or null", ...).
type field struct {
	name string
	typ  reflect.Type
	json string
}

// object is a struct type as JSON sees it: its fields in order, embedded
// structs' promoted.
type object struct {
	typ    reflect.Type
	fields []field
}

func (o object) field(name string) (field, bool) {
	for _, f := range o.fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// jsonTypeOf is a Go type's JSON type; optional (omitempty) pointers are left
// out rather than null, so they are not "or null".
func jsonTypeOf(t reflect.Type, omitempty bool) string {
	switch t {
	case reflect.TypeFor[time.Time]():
		return "string"
	case reflect.TypeFor[Budget]():
		return "number or null" // its MarshalJSON writes 0 as null
	}
	switch t.Kind() {
	case reflect.Pointer:
		if omitempty {
			return jsonTypeOf(t.Elem(), false)
		}
		return jsonTypeOf(t.Elem(), false) + " or null"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.Kind().String() // an interface: refused by TestKindsAreConcrete
}

func objectOf(t reflect.Type) object {
	o := object{typ: t}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			o.fields = append(o.fields, objectOf(sf.Type).fields...)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		omit := strings.Contains(","+opts+",", ",omitempty,")
		o.fields = append(o.fields, field{name: name, typ: sf.Type, json: jsonTypeOf(sf.Type, omit)})
	}
	return o
}

// objects lists t's object and every object nested in it, t's first. A map is
// data (a diagnostic's context, a message's headers): its keys are not fields.
func objects(t reflect.Type) []object {
	var out []object
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || seen[t] {
			return
		}
		seen[t] = true
		o := objectOf(t)
		out = append(out, o)
		for _, f := range o.fields {
			walk(f.typ)
		}
	}
	walk(t)
	return out
}

// table is one of the page's tables: its header's first cell and its rows' cells.
type table struct {
	head string
	rows [][]string
}

// section is a "## " or "### " part of the page: its title, its prose and
// tables without the examples, and its tables.
type section struct {
	title  string
	text   string
	tables []table
}

var (
	fenceRE    = regexp.MustCompile("(?ms)^```.*?^```")
	backtickRE = regexp.MustCompile("`([^`]*)`")
	wordRE     = regexp.MustCompile(`[A-Za-z0-9_]+`)
)

func sections(md string) map[string]section {
	out := map[string]section{}
	for _, part := range regexp.MustCompile(`(?m)^#{2,3} `).Split(md, -1)[1:] {
		title, body, _ := strings.Cut(part, "\n")
		s := section{title: title, text: fenceRE.ReplaceAllString(body, "")}
		var cur *table
		for _, line := range strings.Split(s.text, "\n") {
			if !strings.HasPrefix(line, "|") {
				cur = nil
				continue
			}
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			switch {
			case cur == nil:
				s.tables = append(s.tables, table{head: cells[0]})
				cur = &s.tables[len(s.tables)-1]
			case strings.HasPrefix(cells[0], "---"):
			default:
				cur.rows = append(cur.rows, cells)
			}
		}
		out[title] = s
	}
	return out
}

// named is every word the text names in backticks.
func named(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range backtickRE.FindAllStringSubmatch(text, -1) {
		for _, w := range wordRE.FindAllString(m[1], -1) {
			out[w] = true
		}
	}
	return out
}

// rowNames is the fields a row's first cell names: "`createdAt`, `updatedAt`".
func rowNames(cell string) []string {
	var out []string
	for _, m := range backtickRE.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// docProblems compares the page with the kinds' types and says each difference.
func docProblems(md string, kinds []Kind) []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	secs := sections(md)
	env, ok := secs["The envelope"]
	if !ok {
		return []string{`no section "## The envelope"`}
	}
	envelope := objectOf(reflect.TypeFor[Envelope]())

	// The envelope's table is Envelope's fields, and the kinds' table is Kinds.
	var envRows, kindRows []string
	for _, tb := range env.tables {
		for _, row := range tb.rows {
			names := rowNames(row[0])
			switch tb.head {
			case "field":
				for _, n := range names {
					envRows = append(envRows, n)
					f, ok := envelope.field(n)
					if !ok {
						add("The envelope documents %q, which Envelope has not", n)
					} else if len(row) > 1 && row[1] != f.json {
						add("The envelope: %q is %s, documented as %s", n, f.json, row[1])
					}
				}
			case "kind":
				kindRows = append(kindRows, names...)
				var printed []string
				for _, m := range backtickRE.FindAllStringSubmatch(row[1], -1) {
					printed = append(printed, m[1])
				}
				for _, k := range kinds {
					if len(names) == 1 && k.Name == names[0] && k.PrintedBy != nil && !slices.Equal(printed, k.PrintedBy) {
						add("The envelope: kind %s is printed by %v, documented as %v", k.Name, k.PrintedBy, printed)
					}
				}
			}
		}
	}
	for _, f := range envelope.fields {
		if !slices.Contains(envRows, f.name) {
			add("The envelope's table has no row for Envelope's %q", f.name)
		}
	}
	var kindNames []string
	for _, k := range kinds {
		kindNames = append(kindNames, k.Name)
	}
	if !slices.Equal(kindRows, kindNames) {
		add("The envelope's table of kinds lists %v; Kinds is %v", kindRows, kindNames)
	}

	for _, k := range kinds {
		sec, ok := secs[k.Name]
		if !ok {
			add("kind %s has no section \"### %s\"", k.Name, k.Name)
			continue
		}
		objs := objects(k.Type)
		// A section naming another kind ("one entry as in `delivery_list`") names its fields too.
		words := named(sec.text)
		for _, other := range kinds {
			if other.Name != k.Name && words[other.Name] {
				for w := range named(secs[other.Name].text) {
					words[w] = true
				}
			}
		}
		inTopTable := map[string]bool{}
		for _, tb := range sec.tables {
			if tb.head != "field" {
				continue
			}
			var names []string
			for _, row := range tb.rows {
				names = append(names, rowNames(row[0])...)
			}
			// The table describes the first object, the kind's own first, that has all its rows.
			subject := -1
			for i, o := range objs {
				has := true
				for _, n := range names {
					if _, ok := o.field(n); !ok {
						has = false
					}
				}
				if has {
					subject = i
					break
				}
			}
			if subject < 0 {
				absent := false
				for _, n := range names {
					found := false
					for _, o := range objs {
						if _, ok := o.field(n); ok {
							found = true
						}
					}
					if !found {
						absent = true
						add("%s documents %q, which %s has not", k.Name, n, k.Type)
					}
				}
				if !absent {
					add("%s: no one object of %s has every field of the table %v", k.Name, k.Type, names)
				}
				continue
			}
			for _, row := range tb.rows {
				for _, n := range rowNames(row[0]) {
					f, _ := objs[subject].field(n)
					if len(row) > 1 && row[1] != f.json {
						add("%s: %q is %s in %s, documented as %s", k.Name, n, f.json, objs[subject].typ, row[1])
					}
					if subject == 0 {
						inTopTable[n] = true
					}
				}
			}
		}
		for _, f := range objs[0].fields {
			if _, isEnvelope := envelope.field(f.name); !isEnvelope && !inTopTable[f.name] {
				add("%s: %s's field %q has no row in the section's table", k.Name, k.Type, f.name)
			}
		}
		for _, o := range objs {
			for _, f := range o.fields {
				if _, isEnvelope := envelope.field(f.name); isEnvelope && o.typ == k.Type {
					continue
				}
				if !words[f.name] {
					add("%s: %s's field %q is not named in the section", k.Name, o.typ, f.name)
				}
			}
		}
	}
	return probs
}

func TestKindsDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(reporoot.Dir(t), docPage))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docProblems(string(md), Kinds) {
		t.Errorf("docs/reference/json.md: %s", p)
	}
}

// TestKindsDocumentedFailsOnADifference plants each difference the test
// exists for: a field added to a type only, a row documented only, a type
// column that is wrong, a kind without its section.
func TestKindsDocumentedFailsOnADifference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(reporoot.Dir(t), docPage))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if p := docProblems(md, Kinds); len(p) > 0 {
		t.Fatalf("the page differs already: %v", p)
	}
	type plantedChange struct {
		Envelope
		Action  string   `json:"action"`
		IDs     []string `json:"ids"`
		State   string   `json:"state"`
		Store   string   `json:"store"`
		Planted int      `json:"plantedField"`
	}
	withField := slices.Clone(Kinds)
	for i := range withField {
		if withField[i].Name == "delivery_change" {
			withField[i].Type = reflect.TypeFor[plantedChange]()
		}
	}
	row := "| `action` | string | `retry` or `dismiss` |\n"
	for name, c := range map[string]struct {
		md    string
		kinds []Kind
		want  string
	}{
		"a field only in the type": {md, withField, `"plantedField"`},
		"a row only in the page":   {strings.Replace(md, row, row+"| `plantedRow` | string | none |\n", 1), Kinds, `"plantedRow"`},
		"a wrong type column":      {strings.Replace(md, row, "| `action` | number | `retry` or `dismiss` |\n", 1), Kinds, "documented as number"},
		"a nested field unnamed":   {strings.Replace(md, "`wireType`", "`wire type`", -1), Kinds, `"wireType" is not named`},
		"a kind unlisted":          {strings.Replace(md, "| [`store_stats`](#store_stats) | `store stats` |\n", "", 1), Kinds, "table of kinds"},
		"a kind without section":   {strings.Replace(md, "### store_stats", "### store stats", 1), Kinds, `no section "### store_stats"`},
		"the envelope's row gone":  {strings.Replace(md, "| `command` | string |", "| `commandName` | string |", 1), Kinds, "Envelope's \"command\""},
	} {
		if c.md == md && name != "a field only in the type" {
			t.Fatalf("%s: the plant did not change the page", name)
		}
		probs := docProblems(c.md, c.kinds)
		if !strings.Contains(strings.Join(probs, "\n"), c.want) {
			t.Errorf("%s: want a problem with %s, got %q", name, c.want, probs)
		}
	}
}
