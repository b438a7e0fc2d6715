package diag

// Catalogue holds every code the toolchain can emit. A test fails when a code
// is emitted that is missing here, or when a code here is emitted by no test
// case, and each code has its page docs/diagnostics/<code>.md.
var Catalogue = map[Code]Entry{}

func init() {
	for _, e := range entries {
		if _, dup := Catalogue[e.Code]; dup {
			panic("diag: code catalogued twice: " + string(e.Code))
		}
		Catalogue[e.Code] = e
	}
}

// DocsPath is where a code's page lives, relative to the repository root.
func DocsPath(code Code) string { return "docs/diagnostics/" + string(code) + ".md" }

// DocsBase is the canonical address of the repository's files on the web
// (docs/reference/json.md, "Where a code's page is"): a page's URI is DocsBase
// followed by its DocsPath.
const DocsBase = "https://github.com/jadpo/jadpo/blob/main/"

// DocsURI is the absolute address of a code's page, for editors and the JSON
// report's docsUri.
func DocsURI(code Code) string { return DocsBase + DocsPath(code) }
