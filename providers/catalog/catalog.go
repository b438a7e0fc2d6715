// Package catalog holds the packages built into the toolchain, installed with
// `jadpo package add <Name.vVERSION>`: their .jadpo files are embedded in the
// binary, laid out as they land under a project's packages/<Name>.<version>/.
//
// Built in: AmazonSqs.v2012_11_05 (SQS's ReceiveMessage and DeleteMessage
// over Protocol.aws_json and CredentialScheme.aws_sigv4) and
// CloudflareQueues.v4 (the HTTP pull consumer's pull and ack over
// Protocol.json_http and CredentialScheme.bearer, received by the built-in
// cloudflare_queues driver), SqlInbox.v1 (the sql_inbox driver) and Resend.v1
// (Resend's POST /emails over Protocol.json_http and CredentialScheme.bearer,
// with `provide email`). RedisStreams.v1: a Redis stream, Protocol.redis
// and CredentialScheme.redis_url, received by the redis_streams driver.
package catalog

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed packages
var packages embed.FS

//go:embed published.txt
var published string

// Published lists the digest (lockfile.Digest) of every copy of package
// name the catalogue has published, oldest first, the current one among
// them; nil for a name the catalogue does not hold. A package bearing a
// catalogue name is the catalogue's only if its digest is listed here.
func Published(name string) []string {
	var out []string
	for _, line := range strings.Split(published, "\n") {
		if fields := strings.Fields(line); len(fields) == 2 && fields[0] == name {
			out = append(out, fields[1])
		}
	}
	return out
}

// Names lists the packages in the catalogue, sorted ("AmazonSqs.v2012_11_05").
func Names() []string {
	entries, err := packages.ReadDir("packages")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// Has reports whether the catalogue holds the package name.
func Has(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Files gives the package's files keyed by their slash-separated path inside
// the package ("package.jadpo", "resources/messages.jadpo"), or nil when the
// catalogue has no such package. The map and its slices are the caller's.
func Files(name string) map[string][]byte {
	if name == "" || strings.ContainsAny(name, `/\`) || !Has(name) {
		return nil
	}
	root := path.Join("packages", name)
	out := map[string][]byte{}
	err := fs.WalkDir(packages, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := packages.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, root+"/")] = b
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// Catalogue is the catalogue as a value, for code that is handed a
// catalogue rather than importing this package (lang/lockfile's
// verification, through check and `jadpo package list`).
type Catalogue struct{}

// Builtin is the toolchain's catalogue.
var Builtin Catalogue

// Has is the package's Has.
func (Catalogue) Has(name string) bool { return Has(name) }

// Published is the package's Published.
func (Catalogue) Published(name string) []string { return Published(name) }

// Names is the package's Names: a check suggests the catalogue name nearest
// a connection's package that is not installed.
func (Catalogue) Names() []string { return Names() }

// Files is the package's Files.
func (Catalogue) Files(name string) map[string][]byte { return Files(name) }
