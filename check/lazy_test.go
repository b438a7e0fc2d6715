package check_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/project"
)

// writeBigPackage writes an app whose package has n resources, of which the
// receiving mapping calls one (resources/messages.jadpo).
func writeBigPackage(tb testing.TB, n int) string {
	dir := tb.TempDir()
	files := map[string]string{
		"app.jadpo": `config C {
    key: Text { binding: "KEY" }
    secret: Text { binding: "SECRET" secret: true }
    url: Url { binding: "QUEUE_URL" }
}
store s { }
public event Ping { id: Text }
connection q {
    package: Big.v1
    host: "http://127.0.0.1:9"
    credential: { key_id: config.key secret: config.secret }
    settings: { queue_url: config.url }
}
queue q {
    id_at: "id"
    events: { Ping }
}
`,
		"packages/Big.v1/package.jadpo": `package Big.v1
provider {
    protocol: Protocol.aws_json
    credential: CredentialScheme.aws_sigv4
    aws: { service: "sqs" target: "AmazonSQS" }
    error_code: "__type"
}
settings { queue_url: Url }
`,
		"packages/Big.v1/provides/receiving.jadpo": `provide receiving {
    receive: {
        call: messages.receive_message
        input: { queue_url: settings.queue_url }
        messages: response.messages
        body: item.body
        handle: item.receipt_handle
    }
    acknowledge: {
        call: messages.delete_message
        input: { queue_url: settings.queue_url receipt_handle: message.handle }
    }
}
`,
		"packages/Big.v1/resources/messages.jadpo": `resource messages {
    operation receive_message { input: ReceiveInput output: ReceiveOutput retry_safe: true }
    operation delete_message { input: DeleteInput }
}
value ReceiveInput { queue_url: Url }
value ReceiveOutput { messages: List<Message>? }
value Message { body: Text receipt_handle: Text }
value DeleteInput { queue_url: Url receipt_handle: Text }
`,
	}
	for i := 1; i < n; i++ {
		files[fmt.Sprintf("packages/Big.v1/resources/r%04d.jadpo", i)] = fmt.Sprintf(`resource r%04d {
    operation get_thing { input: Thing%04dInput output: Thing%04d }
    operation put_thing { input: Thing%04d }
}
value Thing%04dInput { id: Text { min_length: 1 max_length: 64 } }
value Thing%04d { id: Text name: Text? tags: List<Text>? count: Int { min: 0 } }
`, i, i, i, i, i, i)
	}
	pkgFiles := map[string][]byte{}
	for name, content := range files {
		if rel, ok := strings.CutPrefix(name, "packages/Big.v1/"); ok {
			pkgFiles[rel] = []byte(content)
		}
	}
	lock := &lockfile.Lock{}
	lock.SetFiles("Big.v1", lockfile.Digest(pkgFiles), lockfile.FileDigests(pkgFiles))
	files["jadpo.lock"] = string(lock.Bytes())
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// A package with 1,000 resources of which the mapping calls one: checking
// parses only the called resource's file.
func TestOnlyCalledResourcesAreParsed(t *testing.T) {
	dir := writeBigPackage(t, 1000)
	p := project.Load(dir)
	res := check.Check(p)
	if res.Diags.HasErrors() {
		t.Fatalf("the project does not check: %v", res.Diags)
	}
	var parsed []string
	for _, f := range p.Parsed {
		parsed = append(parsed, f.Source.Path)
	}
	want := []string{"app.jadpo", "packages/Big.v1/package.jadpo", "packages/Big.v1/provides/receiving.jadpo", "packages/Big.v1/resources/messages.jadpo"}
	if fmt.Sprint(parsed) != fmt.Sprint(want) {
		t.Fatalf("parsed %v, want exactly %v", parsed, want)
	}
	if got := p.Packages["Big.v1"].LoadedResources(); fmt.Sprint(got) != "[messages]" {
		t.Fatalf("loaded resources %v", got)
	}
}

// BenchmarkCheckPackageResources compares checking an app whose package has
// one resource with one whose package has 1,000 (the mapping calls one).
func BenchmarkCheckPackageResources(b *testing.B) {
	for _, n := range []int{1, 1000} {
		dir := writeBigPackage(b, n)
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := check.Check(project.Load(dir)); res.Diags.HasErrors() {
					b.Fatal(res.Diags)
				}
			}
		})
	}
}

// The lock cache answers while jadpo.lock is unchanged, and never hides a
// changed file: the digests it holds are the lock's.
func TestLockCacheKeepsVerifying(t *testing.T) {
	dir := writeBigPackage(t, 50)
	checkOnce := func() []string {
		res := check.Check(project.Load(dir))
		var codes []string
		for _, d := range res.Diags {
			codes = append(codes, d.Code)
		}
		return codes
	}
	if got := checkOnce(); len(got) != 0 {
		t.Fatalf("clean project: %v", got)
	}
	cache := filepath.Join(dir, "build", ".jadpo", "lock.cache")
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatalf("no lock cache after a check: %v", err)
	}
	if strings.Contains(string(b), "r0001.jadpo") || !strings.Contains(string(b), "resources/messages.jadpo") {
		t.Fatalf("the cache holds other files than those looked up:\n%s", b)
	}
	// A check answered by the cache still finds a changed file.
	msgs := filepath.Join(dir, "packages", "Big.v1", "resources", "messages.jadpo")
	orig, _ := os.ReadFile(msgs)
	os.WriteFile(msgs, append(append([]byte(nil), orig...), []byte("\nvalue Extra { x: Text }\n")...), 0o644)
	if got := checkOnce(); fmt.Sprint(got) != "[package.lock_mismatch]" {
		t.Fatalf("changed file under the cache: %v", got)
	}
	os.WriteFile(msgs, orig, 0o644)
	// A file the cache never saw is looked up in the lock itself.
	app := filepath.Join(dir, "app.jadpo")
	a, _ := os.ReadFile(app)
	os.WriteFile(app, append(a, []byte("\nsubscriber s {\n    on Ping(p) {\n        attempt q.r0007.get_thing(id: p.id)\n    }\n}\n")...), 0o644)
	if got := checkOnce(); len(got) != 0 {
		t.Fatalf("a resource outside the cache: %v", got)
	}
	if b, _ := os.ReadFile(cache); !strings.Contains(string(b), "resources/r0007.jadpo") {
		t.Fatalf("the cache was not rewritten with the new lookup:\n%s", b)
	}
	// A lock that changes invalidates the cache: remove the package's line.
	lock := filepath.Join(dir, "jadpo.lock")
	os.WriteFile(lock, []byte("# empty\n"), 0o644)
	if got := checkOnce(); fmt.Sprint(got) != "[package.lock_mismatch]" {
		t.Fatalf("after the lock changed: %v", got)
	}
}
