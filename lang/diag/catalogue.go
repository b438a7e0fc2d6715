package diag

// Entry is a code's row in the catalogue.
type Entry struct {
	Code     string
	Severity Severity
	// Title is the code's summary template: what every diagnostic of the code
	// is about. A diagnostic's own Summary names its concrete case.
	Title string
	// Help is the default help text.
	Help string
}

// Catalogue holds every code the toolchain can emit. A test fails when a code
// is emitted that is missing here, or when a code here is emitted by no test
// case, and each code has its page docs/diagnostics/<code>.md.
var Catalogue = map[string]Entry{}

func init() {
	for _, e := range entries {
		if _, dup := Catalogue[e.Code]; dup {
			panic("diag: code catalogued twice: " + e.Code)
		}
		Catalogue[e.Code] = e
	}
}

// DocsPath is where a code's page lives, relative to the repository root.
func DocsPath(code string) string { return "docs/diagnostics/" + code + ".md" }

var entries = []Entry{
	// Lexical and syntax problems: the parser knows no rules, only shapes.
	{"syntax.unexpected_token", Error, "unexpected `{token}`",
		"check the declaration's shape against the language reference"},
	{"syntax.unterminated_string", Error, "text is not closed before the end of the line",
		"close the text with `\"`; text literals stay on one line"},
	{"syntax.invalid_escape", Error, "`{escape}` is not an escape text may use",
		"text may use only the escapes \\\" \\\\ \\n \\r \\t"},
	{"syntax.stray_character", Error, "`{char}` cannot appear here",
		"remove the character; comments start with `//`"},
	{"syntax.invalid_encoding", Error, "the file is not valid UTF-8",
		"save the file as UTF-8"},

	// The project as a whole.
	{"toolchain.empty_project", Error, "the project has no app.jadpo",
		"a project is a directory holding app.jadpo"},
	{"toolchain.project_read_failed", Error, "the project could not be read",
		"check that the directory exists and is readable"},
	{"toolchain.usage_invalid", Error, "the command was used wrongly",
		"run `jadpo help <command>` for its arguments and flags"},
}
